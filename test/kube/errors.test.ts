/** forbiddenRequest (lib/kube/errors.ts): what a 403 refused, read from the API server's Status. */
import { describe, expect, it } from 'vitest';
import { forbiddenRequest } from '../../lib/kube/index.js';

const status = (message: string, code = 403) => ({ code, message: `HTTP ${code}`, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason: 'Forbidden', code } });

describe('forbiddenRequest', () => {
  it("an RBAC denial at the cluster scope -> its verb, resource and group (as kube-apiserver v1.36 words it)", () => {
    const err = status('persistentvolumes is forbidden: User "system:serviceaccount:volhook-system:volhook-forwarder" cannot create resource "persistentvolumes" in API group "" at the cluster scope');
    expect(forbiddenRequest(err)).toEqual({ verb: 'create', resource: 'persistentvolumes', group: '' });
  });

  it('a denial of a subresource in a namespace -> the subresource and the namespace; a body given as text is read too', () => {
    const err = status('persistentvolumeclaims "data" is forbidden: User "u" cannot patch resource "persistentvolumeclaims/status" in API group "" in the namespace "apps"');
    expect(forbiddenRequest({ ...err, body: JSON.stringify(err.body) })).toEqual({ verb: 'patch', resource: 'persistentvolumeclaims/status', group: '', namespace: 'apps' });
  });

  it('another 403, another status, not an API error -> undefined', () => {
    expect(forbiddenRequest(status('forbidden by a proxy'))).toBeUndefined();
    expect(forbiddenRequest(status('x cannot create resource "y" in API group ""', 404))).toBeUndefined();
    expect(forbiddenRequest(new Error('cannot create resource "y" in API group ""'))).toBeUndefined();
  });
});
