import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { isReservedForClaims, requestDropSet, routeDropSet, withoutClientAuthorization } from './trust-boundary.js';
import { upstreamRequestHeaders } from './headers/forward-headers.js';

/** The headers a backend gets for a client request with `rawHeaders`, as a name -> value map. */
function forwarded(
  rawHeaders: string[],
  drop = requestDropSet(['X-role']),
  claimHeaders?: [string, string][],
  remoteAddress = '203.0.113.7',
): Map<string, string> {
  const req = { rawHeaders, headers: {}, socket: { remoteAddress } } as unknown as IncomingMessage;
  const list = upstreamRequestHeaders({ req, requestId: 'r1', hostHeader: 'backend', claimHeaders }, drop);
  const out = new Map<string, string>();
  for (let i = 0; i < list.length; i += 2) out.set(list[i]!, list[i + 1]!);
  return out;
}

describe('requestDropSet', () => {
  it('drops the method-override headers, whatever the configured strip list', () => {
    const drop = requestDropSet([]);
    for (const h of ['x-http-method-override', 'x-http-method', 'x-method-override']) assert.ok(drop.has(h), h);
  });
  it('holds stripHeaders folded: X_User and X-User are one name', () => {
    assert.ok(requestDropSet(['X_User']).has('x-user'));
  });
});

describe('routeDropSet', () => {
  const base = requestDropSet(['x-userid'], true, (a) => a === '10.0.0.9');
  it('keeps ranges and the encoding from routes whose answer is read whole or flushed, leaving the base as it was', () => {
    for (const kind of ['mapping', 'sse', 'aggregate'] as const) {
      const drop = routeDropSet(base, { kind, allowUnderscores: false });
      for (const name of ['accept-encoding', 'range', 'if-range', 'x-userid']) assert.equal(drop.has(name), true, name);
      assert.equal(drop.trustsPeer?.('10.0.0.9'), true, kind);
    }
    for (const name of ['accept-encoding', 'range', 'if-range']) assert.equal(base.has(name), false, name);
  });
  it('sends no body headers on aggregated calls, and passes ranges on streamed routes', () => {
    assert.ok(routeDropSet(base, { kind: 'aggregate', allowUnderscores: false }).has('content-type'));
    for (const kind of ['standard', 'websocket'] as const) {
      const drop = routeDropSet(base, { kind, allowUnderscores: false });
      assert.equal(drop.has('range'), false, kind);
      assert.equal(drop.size, base.size, kind);
    }
  });
  it('says whether names with _ pass', () => {
    assert.equal(routeDropSet(base, { kind: 'standard', allowUnderscores: true }).underscores, true);
    assert.equal(routeDropSet(base, { kind: 'standard', allowUnderscores: false }).underscores, false);
  });
  it('gives the routes of one variant one set, each variant and each configuration its own', () => {
    const standard = { kind: 'standard', allowUnderscores: false } as const;
    assert.equal(routeDropSet(base, standard), routeDropSet(base, { ...standard, kind: 'websocket' }));
    const variants = new Set(
      (['standard', 'mapping', 'aggregate'] as const).flatMap((kind) =>
        [false, true].flatMap((allowUnderscores) =>
          [false, true].map((caches) => routeDropSet(base, { kind, allowUnderscores, caches })),
        ),
      ),
    );
    assert.equal(variants.size, 12);
    const other = requestDropSet(['x-other']);
    assert.notEqual(routeDropSet(other, standard), routeDropSet(base, standard));
    assert.ok(routeDropSet(other, standard).has('x-other'));
  });
});

describe('underscore spellings (upstreamRequestHeaders)', () => {
  it('drops every client header name with _ by default', () => {
    const out = forwarded(['X_role', 'admin', 'X_Tenant', 't1', 'X-Other', 'ok']);
    assert.equal(out.get('X-Other'), 'ok');
    assert.ok(![...out.keys()].some((n) => n.includes('_')));
  });
  it('with underscores allowed, compares reserved names folded', () => {
    const drop = routeDropSet(requestDropSet(['X-role']), { kind: 'standard', allowUnderscores: true });
    const out = forwarded(
      [
        'X_role',
        'admin',
        'X_Forwarded_For',
        '6.6.6.6',
        'x_real_ip',
        '6.6.6.6',
        'X_HTTP_Method_Override',
        'DELETE',
        'X_Tenant',
        't1',
      ],
      drop,
    );
    assert.deepEqual(
      [...out.keys()].filter((n) => n.includes('_')),
      ['X_Tenant'],
    );
    assert.equal(out.get('x-forwarded-for'), '203.0.113.7');
  });
  it("never merges a trusted proxy's underscore spelling into X-Forwarded-For", () => {
    const drop = routeDropSet(
      requestDropSet([], true, () => true),
      { kind: 'standard', allowUnderscores: true },
    );
    const out = forwarded(['X_Forwarded_For', '6.6.6.6', 'X-Forwarded-For', '198.51.100.1'], drop);
    assert.equal(out.get('x-forwarded-for'), '198.51.100.1, 203.0.113.7');
  });
  it('drops a client header in either spelling when a claim header takes that name', () => {
    const drop = routeDropSet(requestDropSet([]), { kind: 'standard', allowUnderscores: true });
    const out = forwarded(['X-preferred-username', 'mallory', 'X_preferred_username', 'mallory'], drop, [
      ['X-preferred_username', 'alice'],
    ]);
    assert.deepEqual(
      [...out.entries()].filter(([, v]) => v === 'mallory'),
      [],
    );
    assert.equal(out.get('X-preferred_username'), 'alice');
  });
});

describe('isReservedForClaims', () => {
  it('refuses the names the gateway owns or only a trusted proxy may send, in both spellings', () => {
    for (const name of [
      'x-http-method-override',
      'x-real-ip',
      'x_real_ip',
      'x-forwarded-for',
      'x-forwarded-port',
      'x-request-id',
    ])
      assert.equal(isReservedForClaims(name), true, name);
    assert.equal(isReservedForClaims('x-client-subject', 'X-Client-Subject'), true);
    assert.equal(isReservedForClaims('x_client_subject', 'X-Client-Subject'), true);
    assert.equal(isReservedForClaims('x-sub'), false);
  });
});

describe('withoutClientAuthorization', () => {
  it('removes every Authorization field from the raw list, whatever its case', () => {
    const req = { rawHeaders: ['Authorization', 'a', 'X-A', '1', 'authorization', 'b'] } as unknown as IncomingMessage;
    withoutClientAuthorization(req);
    assert.deepEqual(req.rawHeaders, ['X-A', '1']);
  });
});
