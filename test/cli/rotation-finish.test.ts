import { describe, expect, it } from 'vitest';
import { finishRefusal, ROTATION_QUIET_MS } from '../../lib/cli/rotation-finish.js';
import { VERIFIED_RECORD_INTERVAL_MS } from '../../lib/reports/index.js';

const NOW = Date.UTC(2026, 11, 6, 12);
const OLD = 'sha256:aaaaaaaaaaaa';
const OLDER = 'sha256:bbbbbbbbbbbb';
const NEW = 'sha256:cccccccccccc';
const decide = (verifiedBy: Record<string, number>, removed = [OLD, OLDER]) => finishRefusal(removed, verifiedBy, NOW, 'directory /r', NEW);

describe('rotate-secret --finish: whether the older secrets may go', () => {
  it('an old secret verified a request 2 min ago -> refused, naming its fingerprint, when, where, and the metric of the new one', () => {
    const why = decide({ [OLD]: NOW - 120_000, [NEW]: NOW - 1000 });
    expect(why).toContain(`${OLD} at ${new Date(NOW - 120_000).toISOString()} (120 s ago)`);
    expect(why).toContain('directory /r');
    expect(why).toContain(`volhook_forwarder_signing_secret_info{fingerprint="${NEW}"}`);
    expect(why).toContain(new Date(NOW - 120_000 + VERIFIED_RECORD_INTERVAL_MS + ROTATION_QUIET_MS).toISOString());
    expect(why).not.toContain(OLDER);
  });

  it('a forwarder at rest reports within 1,800 s: an old secret last verified 1,500 s ago (past two resyncs) -> still refused', () => {
    expect(decide({ [OLD]: NOW - 1_500_000 })).toContain(OLD);
  });

  it('two old secrets in use -> both named, the latest first', () => {
    const why = decide({ [OLD]: NOW - 300_000, [OLDER]: NOW - 10_000 }) ?? '';
    expect(why.indexOf(OLDER)).toBeGreaterThan(-1);
    expect(why.indexOf(OLDER)).toBeLessThan(why.indexOf(OLD));
  });

  it('the recorded time may lag the latest use by the record interval: within the window plus the interval -> refused; just past it -> allowed', () => {
    const edge = NOW - ROTATION_QUIET_MS - VERIFIED_RECORD_INTERVAL_MS;
    expect(decide({ [OLD]: edge + 1 })).toBeDefined();
    expect(decide({ [OLD]: edge })).toBeUndefined();
  });

  it('the control: only the kept secret in recent use, or nothing recorded -> allowed', () => {
    expect(decide({ [NEW]: NOW, [OLD]: NOW - 7_200_000 })).toBeUndefined();
    expect(decide({})).toBeUndefined();
    // A recent use of a secret not being removed is not counted.
    expect(decide({ [OLD]: NOW }, [OLDER])).toBeUndefined();
  });
});
