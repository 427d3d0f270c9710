/**
 * A schema built the first time it is used instead of at import. Building a zod schema is
 * far from free (each check, field and union member is an object set up through zod's
 * constructors), and a module holding dozens of them made every cold start of the function
 * pay for all of them, including the many one request never touches (a provisioning request
 * parses no write, no report file, no registry file).
 *
 * The value returned is an empty stand-in whose prototype traps the first property read (or
 * `in` test): it then builds the schema and takes on its own properties and prototype, so from
 * then on it *is* that schema — `parse`, `safeParse`, `_zod`, use inside other schemas — with
 * no indirection left on the parse path. zod reaches a schema it holds as a member only through
 * property reads, so a stand-in nested in another schema builds when that one is first parsed.
 */
export function deferred<T extends object>(build: () => T): T {
  const schema = Object.create(null) as T;
  const become = () => {
    Object.setPrototypeOf(schema, null);
    const built = build();
    Object.defineProperties(schema, Object.getOwnPropertyDescriptors(built));
    Object.setPrototypeOf(schema, Object.getPrototypeOf(built));
  };
  const firstUse = new Proxy(Object.create(null) as object, {
    get(_, key, receiver) {
      become();
      return Reflect.get(schema, key, receiver);
    },
    has(_, key) {
      become();
      return Reflect.has(schema, key);
    },
  });
  Object.setPrototypeOf(schema, firstUse);
  return schema;
}
