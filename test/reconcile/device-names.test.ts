import { describe, expect, it } from 'vitest';
import { DEVICE_NAMES, DeviceAllocator, firstFreeDevice } from '../../lib/reconcile/device-names.js';

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

  it('two claims on one instance -> different names; another instance -> starts over', () => {
    const devices = new DeviceAllocator();
    expect(devices.claim('i-1', ['/dev/xvda'])).toBe('/dev/xvdaa');
    expect(devices.claim('i-1', ['/dev/xvda'])).toBe('/dev/xvdab');
    expect(devices.claim('i-2', ['/dev/xvda'])).toBe('/dev/xvdaa');
  });
});
