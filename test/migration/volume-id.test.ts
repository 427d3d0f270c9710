/** In-tree volume IDs against csi-translation-lib's `KubernetesVolumeIDToEBSVolumeID` (plugins/aws_ebs.go 231–278). */
import { describe, expect, it } from 'vitest';
import { kubernetesVolumeIdToEbsVolumeId, TranslationError } from '../../lib/migration/index.js';

describe('KubernetesVolumeIDToEBSVolumeID', () => {
  it.each([
    ['upstream vector: vol-02399794d890f9375 -> itself', 'vol-02399794d890f9375', 'vol-02399794d890f9375'],
    ['upstream vector: aws:///vol-02399794d890f9375 -> vol-…', 'aws:///vol-02399794d890f9375', 'vol-02399794d890f9375'],
    ['upstream vector: aws://us-west-2a/vol-02399794d890f9375 -> vol-… (the zone is ignored)', 'aws://us-west-2a/vol-02399794d890f9375', 'vol-02399794d890f9375'],
    ['no aws:// prefix -> returned as it is, unchecked (upstream tests use "vol01")', 'vol01', 'vol01'],
    ['slashes around the ID -> trimmed, as strings.Trim(path, "/")', 'aws://us-east-1a//vol-0abc/', 'vol-0abc'],
    ['a percent-encoded path -> decoded, as Go\'s url.Parse decodes it', 'aws:///vol-0ab%63', 'vol-0abc'],
  ])('%s', (_name, id, expected) => {
    expect(kubernetesVolumeIdToEbsVolumeId(id)).toBe(expected);
  });

  it.each([
    ['the ID without vol-', 'aws://us-west-2a/02399794d890f9375'],
    ['the ID in the host (aws://vol-…)', 'aws://vol-02399794d890f9375'],
    ['a path of two segments', 'aws://us-east-1a/extra/vol-0abc'],
  ])('aws:// with %s -> "Invalid format for AWS volume (…)"', (_name, id) => {
    expect(() => kubernetesVolumeIdToEbsVolumeId(id)).toThrow(TranslationError);
    expect(() => kubernetesVolumeIdToEbsVolumeId(id)).toThrow(`Invalid format for AWS volume (${id})`);
  });
});
