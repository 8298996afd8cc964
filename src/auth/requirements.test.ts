import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileRequirements, type Requirements } from './requirements.js';

describe('compileRequirements', () => {
  const cases: {
    name: string;
    rules: Requirements;
    rolesClaim?: string;
    claims: Record<string, unknown>;
    expect: string | undefined;
  }[] = [
    {
      name: 'roles: one of them in a list',
      rules: { roles: ['admin', 'ops'] },
      claims: { roles: ['user', 'ops'] },
      expect: undefined,
    },
    { name: 'roles: a single string claim', rules: { roles: ['admin'] }, claims: { role: 'admin' }, expect: undefined },
    {
      name: 'roles: none of them',
      rules: { roles: ['admin'] },
      claims: { roles: ['user'] },
      expect: 'no role among admin',
    },
    {
      name: 'roles: no role claim at all',
      rules: { roles: ['admin'] },
      claims: { sub: 'u1' },
      expect: 'no role among admin',
    },
    {
      name: 'roles: `roles` is read before `role`',
      rules: { roles: ['admin'] },
      claims: { roles: ['user'], role: 'admin' },
      expect: 'no role among admin',
    },
    {
      name: 'roles: rolesClaim as a dot path (Keycloak)',
      rules: { roles: ['admin'] },
      rolesClaim: 'realm_access.roles',
      claims: { realm_access: { roles: ['admin'] } },
      expect: undefined,
    },
    {
      name: 'roles: a namespaced claim with dots is read as written first',
      rules: { roles: ['admin'] },
      rolesClaim: 'https://example.com/roles',
      claims: { 'https://example.com/roles': ['admin'] },
      expect: undefined,
    },
    {
      name: 'roles: rolesClaim replaces the defaults',
      rules: { roles: ['admin'] },
      rolesClaim: 'groups',
      claims: { roles: ['admin'] },
      expect: 'no role among admin',
    },
    {
      name: 'roles: a number is not a role',
      rules: { roles: ['1'] },
      claims: { roles: [1] },
      expect: 'no role among 1',
    },
    {
      name: 'scopes: every one, from a space-separated scope',
      rules: { scopes: ['orders:read', 'orders:write'] },
      claims: { scope: 'openid orders:write orders:read' },
      expect: undefined,
    },
    {
      name: 'scopes: one missing',
      rules: { scopes: ['orders:read', 'orders:write'] },
      claims: { scope: 'orders:read' },
      expect: 'scope orders:write missing',
    },
    { name: 'scopes: scp as a list', rules: { scopes: ['a'] }, claims: { scp: ['a', 'b'] }, expect: undefined },
    {
      name: 'scopes: scope and scp together',
      rules: { scopes: ['a', 'b'] },
      claims: { scope: 'a', scp: ['b'] },
      expect: undefined,
    },
    {
      name: 'claims: exact string',
      rules: { claims: { tenant: 'acme' } },
      claims: { tenant: 'acme' },
      expect: undefined,
    },
    {
      name: 'claims: another value',
      rules: { claims: { tenant: 'acme' } },
      claims: { tenant: 'umbrella' },
      expect: 'claim tenant does not match',
    },
    {
      name: 'claims: one of a list',
      rules: { claims: { plan: ['pro', 'enterprise'] } },
      claims: { plan: 'enterprise' },
      expect: undefined,
    },
    {
      name: 'claims: a list claim holding the value',
      rules: { claims: { groups: 'ops' } },
      claims: { groups: ['dev', 'ops'] },
      expect: undefined,
    },
    {
      name: 'claims: types are compared strictly (true is not "true")',
      rules: { claims: { email_verified: true } },
      claims: { email_verified: 'true' },
      expect: 'claim email_verified does not match',
    },
    {
      name: 'claims: a dot path',
      rules: { claims: { 'org.id': 7 } },
      claims: { org: { id: 7 } },
      expect: undefined,
    },
    {
      name: 'claims: a dot path through a list is absent',
      rules: { claims: { 'orgs.id': 7 } },
      claims: { orgs: [{ id: 7 }] },
      expect: 'claim orgs.id does not match',
    },
    {
      name: 'claims: an inherited property is not a claim',
      rules: { claims: { constructor: 'x' } },
      claims: {},
      expect: 'claim constructor does not match',
    },
    {
      name: 'all rules together: the first failing one is reported',
      rules: { roles: ['admin'], scopes: ['a'], claims: { tenant: 'acme' } },
      claims: { roles: ['admin'], scope: 'a', tenant: 'other' },
      expect: 'claim tenant does not match',
    },
    {
      name: 'all rules together: allowed',
      rules: { roles: ['admin'], scopes: ['a'], claims: { tenant: 'acme' } },
      claims: { roles: 'admin', scope: 'a b', tenant: 'acme' },
      expect: undefined,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.equal(compileRequirements(c.rules, c.rolesClaim)(c.claims), c.expect);
    });
});
