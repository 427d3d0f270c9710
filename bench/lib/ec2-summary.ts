/** The simulator's call counters, reduced to what the report shows. */
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { percent, table } from './format.js';

export interface ActionRow {
  action: string;
  calls: number;
  ok: number;
  throttled: number;
  /** Error answers other than throttling, by code. */
  otherErrors: Record<string, number>;
}

export function actionRows(stats: Ec2SimStats): ActionRow[] {
  return Object.entries(stats.actions)
    .map(([action, s]) => {
      const otherErrors = { ...s.errors };
      delete otherErrors.RequestLimitExceeded;
      return { action, calls: s.calls, ok: s.ok, throttled: s.throttled, otherErrors };
    })
    .sort((a, b) => b.calls - a.calls);
}

export function callsOf(stats: Ec2SimStats, action: string): number {
  return stats.actions[action]?.calls ?? 0;
}

export function ec2Table(stats: Ec2SimStats): string {
  const rows = actionRows(stats).map((r) => [
    r.action,
    String(r.calls),
    String(r.ok),
    String(r.throttled),
    percent(r.throttled, r.calls),
    Object.entries(r.otherErrors)
      .map(([code, n]) => `${code} ${n}`)
      .join(', ') || '—',
  ]);
  const t = stats.total;
  const otherTotal = Object.entries(t.errors).filter(([code]) => code !== 'RequestLimitExceeded').reduce((sum, [, n]) => sum + n, 0);
  rows.push(['all', String(t.calls), String(t.ok), String(t.throttled), percent(t.throttled, t.calls), otherTotal ? `${otherTotal} errors` : '—']);
  return table(['EC2 action', 'calls', 'ok', 'throttled', 'throttled %', 'other errors'], rows);
}
