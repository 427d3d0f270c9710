import { describe, expect, it } from 'vitest';
import { DEVICE_NAMES, DeviceAllocator, deviceFor, firstFreeDevice } from '../../lib/reconcile/device-names.js';

describe('device names', () => {
  it('the list -> /dev/xvdaa…/dev/xvdbz, then /dev/xvdda…/dev/xvddx, then /dev/xvdb…/dev/xvdz', () => {
    expect(DEVICE_NAMES.slice(0, 3)).toEqual(['/dev/xvdaa', '/dev/xvdab', '/dev/xvdac']);
    expect(DEVICE_NAMES[51]).toBe('/dev/xvdbz');
    expect(DEVICE_NAMES.slice(52, 54)).toEqual(['/dev/xvdda', '/dev/xvddb']);
    expect(DEVICE_NAMES[75]).toBe('/dev/xvddx');
    expect(DEVICE_NAMES.slice(76, 78)).toEqual(['/dev/xvdb', '/dev/xvdc']);
    expect(DEVICE_NAMES.at(-1)).toBe('/dev/xvdz');
    expect(new Set(DEVICE_NAMES).size).toBe(52 + 24 + 25);
  });

  it.each([
    ['nothing used -> /dev/xvdaa', [], '/dev/xvdaa'],
    ['root device and the first two used -> /dev/xvdac', ['/dev/xvda', '/dev/xvdaa', '/dev/xvdab'], '/dev/xvdac'],
    ['all two-letter a/b names used -> /dev/xvdda', DEVICE_NAMES.slice(0, 52), '/dev/xvdda'],
    ['every name used -> none', DEVICE_NAMES, undefined],
  ])('%s', (_name, taken, expected) => {
    expect(firstFreeDevice(taken)).toBe(expected);
  });

  it('two claims on one instance -> different names; another instance -> the same volume gets the same name', () => {
    const devices = new DeviceAllocator();
    const first = devices.claim('i-1', ['/dev/xvda'], 'vol-1');
    const second = devices.claim('i-1', ['/dev/xvda'], 'vol-1');
    expect(first).toMatch(/^\/dev\/xvd/);
    expect(second).not.toBe(first);
    expect(devices.claim('i-2', ['/dev/xvda'], 'vol-1')).toBe(first);
  });

  it('a volume gets a stable name among the free ones, never a taken one', () => {
    const taken = ['/dev/xvda', ...DEVICE_NAMES.slice(0, 10)];
    const name = deviceFor('vol-0123456789abcdef0', taken);
    expect(name).toBeDefined();
    expect(taken).not.toContain(name);
    expect(deviceFor('vol-0123456789abcdef0', taken)).toBe(name);
    expect(deviceFor('vol-1', DEVICE_NAMES)).toBeUndefined();
    expect(deviceFor('vol-1', DEVICE_NAMES.slice(1))).toBe(DEVICE_NAMES[0]);
  });

  it('concurrent requests for one instance seldom pick the same name (spread by volume ID)', () => {
    // Two requests each see the same free names; 100 pairs of different volumes.
    let collisions = 0;
    for (let i = 0; i < 100; i++) {
      if (deviceFor(`vol-${(i * 2).toString(16).padStart(17, '0')}`, []) === deviceFor(`vol-${(i * 2 + 1).toString(16).padStart(17, '0')}`, [])) collisions++;
    }
    // First-free would collide on all 100; uniform over 101 names, about one.
    expect(collisions).toBeLessThan(10);
  });
});
