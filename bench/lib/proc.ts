/** Reading a child process's memory and CPU time from Linux's /proc, and a few HTTP helpers for its health port. */
import { readFileSync } from 'node:fs';

export interface ProcMemory {
  /** Resident set size now (VmRSS), bytes. */
  rss: number;
  /** Peak resident set size (VmHWM), bytes. */
  peak: number;
}

/** VmRSS and VmHWM of `pid`; undefined when /proc has no such (live) process, or no /proc. */
export function procMemory(pid: number): ProcMemory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  const rss = kib('VmRSS');
  const peak = kib('VmHWM');
  // A process that has exited but not been reaped (a zombie) has no Vm* lines.
  return Number.isNaN(rss) || Number.isNaN(peak) ? undefined : { rss, peak };
}

/** CPU time (utime + stime) of `pid` so far, ms; undefined without /proc. */
export function procCpuMs(pid: number): number | undefined {
  try {
    // The fields after the command name (which may hold spaces, hence after the last ')').
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime: fields 14 and 15 of stat
    return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Linux's USER_HZ, 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** GET a URL; status and body, or undefined when nothing answers. */
export async function httpGet(url: string, timeoutMs = 2000): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined;
  }
}

/** A sample's value from Prometheus text (the first series of that name). */
export function promValue(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+([-\\d.e+]+)`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}
