/**
 * The few XML shapes EC2 answers with. Objects become elements in key order, arrays become
 * `<item>` lists (EC2's convention for every `…Set`), dates ISO 8601 with milliseconds.
 */
export type XmlValue = string | number | boolean | Date | null | undefined | XmlObject | XmlValue[];
export interface XmlObject {
  [element: string]: XmlValue;
}

export const EC2_XMLNS = 'http://ec2.amazonaws.com/doc/2016-11-15/';

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&apos;',
  );
}

function scalar(value: string | number | boolean | Date): string {
  if (value instanceof Date) return value.toISOString();
  return escapeXml(String(value));
}

export function toXml(name: string, value: XmlValue): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) {
    return `<${name}>${value.map((v) => toXml('item', v)).join('')}</${name}>`;
  }
  if (typeof value === 'object' && !(value instanceof Date)) {
    let inner = '';
    for (const [k, v] of Object.entries(value)) inner += toXml(k, v);
    return `<${name}>${inner}</${name}>`;
  }
  return `<${name}>${scalar(value)}</${name}>`;
}

/** `<ActionResponse xmlns=…><requestId/>…</ActionResponse>`: the body of every success. */
export function responseXml(action: string, requestId: string, body: XmlObject): string {
  let inner = `<requestId>${escapeXml(requestId)}</requestId>`;
  for (const [k, v] of Object.entries(body)) inner += toXml(k, v);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${EC2_XMLNS}">${inner}</${action}Response>`;
}

export function errorXml(code: string, message: string, requestId: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>` +
    `<Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message>` +
    `</Error></Errors><RequestID>${escapeXml(requestId)}</RequestID></Response>`
  );
}
