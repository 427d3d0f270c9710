import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ec2Error, type CreateDiskRequest, type Disk, type Ec2Gateway, type Zone } from '../../lib/ec2/index.js';

/** One EC2 (mocked, simulated or real) that the contract runs against. */
export interface GatewayWorld {
  /** A fresh gateway for `clusterId` over this world's EC2 (one per request, as in the app). */
  gateway(clusterId: string): Ec2Gateway;
  /** A running instance the volumes can be attached to, and its zone. */
  instance: { instanceId: string; zone: string };
  /** The Region's zones as this EC2 has them (each EC2 maps names to IDs its own way). */
  zones: Zone[];
  /** How long a state change (creating → available, attaching → attached…) may take. Default 5 s. */
  settleTimeoutMs?: number;
  close?(): Promise<void>;
}

/**
 * The behaviour every Ec2Gateway must show, whatever EC2 it talks to: idempotent create,
 * look-up by name limited to the cluster's own volumes, unknown IDs as undefined, and
 * attach / detach / delete that may be repeated.
 */
export function describeGatewayContract(name: string, makeWorld: () => Promise<GatewayWorld>): void {
  describe(`Ec2Gateway contract: ${name}`, () => {
    let world: GatewayWorld;
    let gw: Ec2Gateway;
    const cluster = 'c1';

    beforeEach(async () => {
      world = await makeWorld();
      gw = world.gateway(cluster);
    });
    afterEach(async () => {
      await world.close?.();
    });

    const request = (pvName = `pvc-${randomUUID()}`, clusterId = cluster): CreateDiskRequest => ({
      name: pvName,
      zone: world.instance.zone,
      sizeGiB: 4,
      type: 'gp3',
      tags: {
        CSIVolumeName: pvName,
        'ebs.csi.aws.com/cluster': 'true',
        [`kubernetes.io/cluster/${clusterId}`]: 'owned',
        'kubernetes.io/created-for/pv/name': pvName,
      },
    });

    /** Polls with a fresh gateway (a later request) until `done` holds for the disk. */
    const eventually = async (volumeId: string, done: (disk: Disk | undefined) => boolean) => {
      const until = Date.now() + (world.settleTimeoutMs ?? 5_000);
      for (;;) {
        const disk = await world.gateway(cluster).getDisk(volumeId);
        if (done(disk)) return disk;
        if (Date.now() > until) throw new Error(`volume ${volumeId} did not settle: ${JSON.stringify(disk)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const available = async (volumeId: string) => eventually(volumeId, (d) => d?.state === 'available');

    it('createDisk twice with one name -> one volume', async () => {
      const req = request();
      const first = await gw.createDisk(req);
      const second = await world.gateway(cluster).createDisk(req);
      expect(second.volumeId).toBe(first.volumeId);
      expect(first).toMatchObject({ zone: req.zone, sizeGiB: 4, type: 'gp3' });
    });

    it('concurrent createDisk with one name -> one volume', async () => {
      const req = request();
      const [a, b] = await Promise.all([gw.createDisk(req), world.gateway(cluster).createDisk(req)]);
      expect(b.volumeId).toBe(a.volumeId);
      expect((await gw.findDiskByName(req.name))?.volumeId).toBe(a.volumeId);
    });

    it('a deleted volume has the name -> createDisk makes a new volume, and the look-up by name finds the new one', async () => {
      const req = request();
      const first = await gw.createDisk(req);
      await available(first.volumeId);
      await world.gateway(cluster).deleteDisk(first.volumeId);
      // Its token is spent: EC2 would answer it with the deleted volume.
      const second = await world.gateway(cluster).createDisk(req);
      expect(second.volumeId).not.toBe(first.volumeId);
      expect(['creating', 'available']).toContain(second.state);
      expect((await world.gateway(cluster).findDiskByName(req.name))?.volumeId).toBe(second.volumeId);
      expect((await world.gateway(cluster).createDisk(req)).volumeId).toBe(second.volumeId);
    });

    it('created disk -> found by name with all its tags', async () => {
      const req = request();
      const created = await gw.createDisk(req);
      const found = await world.gateway(cluster).findDiskByName(req.name);
      expect(found?.volumeId).toBe(created.volumeId);
      expect(found?.tags).toMatchObject(req.tags);
    });

    it("listClusterDisks -> this cluster's volumes with their creation time, never another cluster's", async () => {
      const mine = [await gw.createDisk(request()), await gw.createDisk(request())];
      const theirs = await world.gateway('other-cluster').createDisk(request(undefined, 'other-cluster'));
      const listed = await world.gateway(cluster).listClusterDisks();
      const ids = listed.map((d) => d.volumeId);
      for (const disk of mine) expect(ids).toContain(disk.volumeId);
      expect(ids).not.toContain(theirs.volumeId);
      for (const disk of listed) {
        expect(disk.tags[`kubernetes.io/cluster/${cluster}`]).toBe('owned');
        expect(disk.tags['volhook.io/cluster']).toBe(cluster);
        expect(Number.isNaN(Date.parse(disk.createdAt ?? ''))).toBe(false);
      }
    });

    it('unknown name -> findDiskByName undefined', async () => {
      expect(await gw.findDiskByName(`pvc-${randomUUID()}`)).toBeUndefined();
    });

    it("another cluster's volume -> not found by name", async () => {
      const theirs = request(undefined, 'other-cluster');
      await world.gateway('other-cluster').createDisk(theirs);
      expect(await gw.findDiskByName(theirs.name)).toBeUndefined();
      expect(await world.gateway('other-cluster').findDiskByName(theirs.name)).toBeDefined();
    });

    it('unknown and malformed IDs in one batch -> undefined, the known volume still found', async () => {
      const created = await gw.createDisk(request());
      const fresh = world.gateway(cluster);
      const [unknown, known, malformed] = await Promise.all([
        fresh.getDisk('vol-0123456789abcdef0'),
        fresh.getDisk(created.volumeId),
        fresh.getDisk('not-a-volume'),
      ]);
      expect(unknown).toBeUndefined();
      expect(malformed).toBeUndefined();
      expect(known?.volumeId).toBe(created.volumeId);
    });

    it('getInstance -> its zone; unknown instance -> undefined', async () => {
      const [instance, unknown] = await Promise.all([
        gw.getInstance(world.instance.instanceId),
        gw.getInstance('i-0123456789abcdef0'),
      ]);
      expect(instance).toMatchObject({ instanceId: world.instance.instanceId, zone: world.instance.zone });
      expect(unknown).toBeUndefined();
    });

    it("zones -> the Region's zones, each name and ID once, the same from any gateway", async () => {
      const byName = (zones: Zone[]) => [...zones].sort((a, b) => a.name.localeCompare(b.name));
      const zones = await gw.zones();
      expect(byName(zones)).toEqual(byName(world.zones));
      expect(new Set(zones.map((z) => z.id)).size).toBe(zones.length);
      expect(zones.map((z) => z.name)).toContain(world.instance.zone);
      expect(byName(await world.gateway('other-cluster').zones())).toEqual(byName(zones));
      expect(byName(await world.gateway(cluster).zones())).toEqual(byName(zones));
    });

    it('createDisk in the zone named for a zone ID -> the disk is in the zone with that ID', async () => {
      const zones = await gw.zones();
      const target = zones.find((z) => z.name !== world.instance.zone) ?? zones[0]!;
      const created = await gw.createDisk({ ...request(), zone: target.name });
      const found = await world.gateway(cluster).getDisk(created.volumeId);
      expect(zones.find((z) => z.name === found?.zone)?.id).toBe(target.id);
    });

    it('attach twice -> both resolve, the disk shows the attachment', async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      const { instanceId } = world.instance;
      expect(['attaching', 'attached']).toContain(await world.gateway(cluster).attachDisk(volumeId, instanceId, '/dev/xvdaa'));
      expect(['attaching', 'attached']).toContain(await world.gateway(cluster).attachDisk(volumeId, instanceId, '/dev/xvdaa'));
      const disk = await eventually(volumeId, (d) => d?.attachments.some((a) => a.state === 'attached') ?? false);
      expect(disk?.attachments).toEqual([{ instanceId, device: '/dev/xvdaa', state: 'attached', attachTime: expect.any(String) }]);
      expect(Date.parse(disk!.attachments[0]!.attachTime!)).toBeGreaterThan(Date.now() - 60_000);
      const instance = await world.gateway(cluster).getInstance(instanceId);
      expect(instance?.devicesInUse).toContain('/dev/xvdaa');
    });

    it('detach twice, then detach after the volume is gone -> all resolve', async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      const { instanceId } = world.instance;
      await world.gateway(cluster).attachDisk(volumeId, instanceId, '/dev/xvdab');
      await eventually(volumeId, (d) => d?.attachments.some((a) => a.state === 'attached') ?? false);
      await world.gateway(cluster).detachDisk(volumeId, instanceId);
      await available(volumeId);
      await world.gateway(cluster).detachDisk(volumeId, instanceId);
      await world.gateway(cluster).deleteDisk(volumeId);
      await world.gateway(cluster).detachDisk(volumeId, instanceId);
    });

    it('delete twice -> both resolve and the volume is gone', async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      await world.gateway(cluster).deleteDisk(volumeId);
      await world.gateway(cluster).deleteDisk(volumeId);
      await eventually(volumeId, (d) => d === undefined || d.state === 'deleted');
    });

    it('delete of an attached volume -> inUse error', async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      await world.gateway(cluster).attachDisk(volumeId, world.instance.instanceId, '/dev/xvdac');
      const err = await world.gateway(cluster).deleteDisk(volumeId).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Ec2Error);
      expect((err as Ec2Error).kind).toBe('inUse');
    });

    /** Polls with a fresh gateway until the snapshot is `completed` (or gone, when `gone`). */
    const snapshotSettled = async (snapshotId: string, gone = false) => {
      const until = Date.now() + (world.settleTimeoutMs ?? 5_000);
      for (;;) {
        const snapshot = await world.gateway(cluster).getSnapshot(snapshotId);
        if (gone ? snapshot === undefined : snapshot?.state === 'completed') return snapshot;
        if (Date.now() > until) throw new Error(`snapshot ${snapshotId} did not settle: ${JSON.stringify(snapshot)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const snapshotRequest = (volumeId: string, name = `snapcontent-${randomUUID()}`) => ({ name, volumeId, tags: { team: 'shop' } });

    it('createSnapshot -> found by its name for this cluster only, by ID, tagged; again with the name -> the same snapshot', async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      const req = snapshotRequest(volumeId);
      const made = await gw.createSnapshot(req);
      expect(made).toMatchObject({ volumeId, sizeGiB: 4, tags: { CSIVolumeSnapshotName: req.name, team: 'shop', 'kubernetes.io/cluster/c1': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c1' } });
      expect((await world.gateway(cluster).findSnapshotsByName(req.name)).map((x) => x.snapshotId)).toEqual([made.snapshotId]);
      expect(await world.gateway('c2').findSnapshotsByName(req.name)).toEqual([]);
      expect((await world.gateway(cluster).getSnapshot(made.snapshotId))?.volumeId).toBe(volumeId);
      expect((await world.gateway(cluster).createSnapshot(req)).snapshotId).toBe(made.snapshotId);
      expect(await world.gateway(cluster).getSnapshot('snap-0123456789abcdef0')).toBeUndefined();
    });

    it("listClusterSnapshots -> this cluster's snapshots with their start time, never another cluster's", async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      const other = await world.gateway('other-cluster').createDisk(request(undefined, 'other-cluster'));
      await available(other.volumeId);
      const mine = await gw.createSnapshot(snapshotRequest(volumeId));
      const theirs = await world.gateway('other-cluster').createSnapshot(snapshotRequest(other.volumeId));
      const listed = await world.gateway(cluster).listClusterSnapshots();
      const ids = listed.map((s) => s.snapshotId);
      expect(ids).toContain(mine.snapshotId);
      expect(ids).not.toContain(theirs.snapshotId);
      for (const snapshot of listed) {
        expect(snapshot.tags[`kubernetes.io/cluster/${cluster}`]).toBe('owned');
        expect(snapshot.tags['volhook.io/cluster']).toBe(cluster);
        expect(Date.parse(snapshot.startTime)).toBeGreaterThan(0);
      }
    });

    it('a completed snapshot -> createDisk from it names it; deleteSnapshot twice -> gone, no error', async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      const snap = await gw.createSnapshot(snapshotRequest(volumeId));
      await snapshotSettled(snap.snapshotId);
      const restored = await world.gateway(cluster).createDisk({ ...request(), sizeGiB: 6, snapshotId: snap.snapshotId });
      expect(restored.snapshotId).toBe(snap.snapshotId);
      await world.gateway(cluster).deleteSnapshot(snap.snapshotId);
      await world.gateway(cluster).deleteSnapshot(snap.snapshotId);
      await snapshotSettled(snap.snapshotId, true);
    });

    it('copyDisk -> a volume in the source zone, tagged with its name; again -> the same copy', async () => {
      const { volumeId } = await gw.createDisk(request());
      await available(volumeId);
      const copyName = `pvc-${randomUUID()}`;
      const copy = { name: copyName, sourceVolumeId: volumeId, sizeGiB: 4, type: 'gp3', tags: { 'kubernetes.io/created-for/pv/name': copyName } };
      const first = await gw.copyDisk(copy);
      expect(first.volumeId).not.toBe(volumeId);
      expect(first).toMatchObject({ zone: world.instance.zone, tags: { CSIVolumeName: copyName } });
      expect((await world.gateway(cluster).copyDisk(copy)).volumeId).toBe(first.volumeId);
      expect((await world.gateway(cluster).findDiskByName(copyName))?.volumeId).toBe(first.volumeId);
    });
  });
}
