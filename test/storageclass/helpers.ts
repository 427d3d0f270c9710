import { expect } from 'vitest';
import { ParameterError, volumeSpecFor, type VolumeSpec, type VolumeSpecInput } from '../../lib/storageclass/index.js';

/**
 * Parameters as table rows type them: TypeScript widens a table of differently-keyed object
 * literals to a union with `key?: undefined` members, which never hold a value at run time.
 */
export type TableParameters = Readonly<Record<string, string | undefined>> | undefined;

/** A claim as the tests vary it: only what a case sets differs from a plain 10Gi RWO filesystem. */
export function input(parameters: TableParameters, claim: Partial<VolumeSpecInput> = {}): VolumeSpecInput {
  return {
    parameters: parameters && definedOnly(parameters),
    requestStorage: '10Gi',
    volumeMode: 'Filesystem',
    accessModes: ['ReadWriteOnce'],
    pvcName: 'data-db-0',
    pvcNamespace: 'shop',
    pvName: 'pvc-6f1c2a1e-0000-4000-8000-000000000001',
    ...claim,
  };
}

export function spec(parameters: TableParameters, claim: Partial<VolumeSpecInput> = {}): VolumeSpec {
  return volumeSpecFor(input(parameters, claim));
}

/** The ParameterError `fn` throws; fails the test if it throws nothing or something else. */
export function parameterErrorOf(fn: () => unknown): ParameterError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ParameterError) return error;
    throw error;
  }
  throw new Error('expected a ParameterError, but nothing was thrown');
}

/** Asserts the error names `parameter` (field and message) and says something matching `problem`. */
export function expectParameterError(fn: () => unknown, parameter: string, problem: RegExp): void {
  const error = parameterErrorOf(fn);
  expect(error.parameter).toBe(parameter);
  expect(error.message.startsWith(`${parameter}: `)).toBe(true);
  expect(error.message).toMatch(problem);
}

function definedOnly(parameters: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(parameters).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
