/**
 * A small reverse index, e.g. claim → pods waiting on it, so an event about one object can
 * enqueue just the keys it concerns instead of scanning every pod.
 */
export class KeyIndex {
  private readonly byGroup = new Map<string, Set<string>>();
  private readonly groupsOf = new Map<string, string[]>();

  /** Files `member` under exactly these groups (none removes it). */
  set(member: string, groups: readonly string[]): void {
    this.remove(member);
    if (groups.length === 0) return;
    this.groupsOf.set(member, [...groups]);
    for (const group of groups) {
      let members = this.byGroup.get(group);
      if (!members) this.byGroup.set(group, (members = new Set()));
      members.add(member);
    }
  }

  remove(member: string): void {
    for (const group of this.groupsOf.get(member) ?? []) {
      const members = this.byGroup.get(group);
      members?.delete(member);
      if (members?.size === 0) this.byGroup.delete(group);
    }
    this.groupsOf.delete(member);
  }

  get(group: string): string[] {
    return [...(this.byGroup.get(group) ?? [])];
  }

  all(): string[] {
    return [...this.groupsOf.keys()];
  }
}
