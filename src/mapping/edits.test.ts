import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../config/load.js';
import { compileRoutes } from '../pipeline/compile-route.js';
import { buildItemEdits, tagPrefixBytes } from './edits.js';

const loaded = loadConfigText(
  `routes:
  - method: GET
    route: /posts
    service: s
    path: /posts
    mapping:
      - { path: "/users/{authorId}", service: u, tag: author, removeKeyMapping: true }
      - { path: "/groups/{groupId}", service: g, tag: group }
`,
  'g.yaml',
  {},
);
assert.ok(loaded.ok);
const rules = compileRoutes(loaded.config).routes[0]!.mapping;

describe('buildItemEdits', () => {
  it('sets tags, removes the parameter only where the tag was set, reports each failed pair once', () => {
    // item 0: author call 0 (ok), group call 1 (failed); item 1: author call 2 (failed), group call 1 (failed)
    const callOf = Int32Array.from([0, 1, 2, 1]);
    const outcomes = [
      { ok: true as const, json: '{"id":1}' },
      { ok: false as const, reason: 'HTTP 500' },
      { ok: false as const, reason: 'timeout' },
    ];
    const { edits, addedBytes, failures, failedItems } = buildItemEdits(
      2,
      rules,
      callOf,
      outcomes,
      tagPrefixBytes(rules),
    );
    assert.deepEqual(edits[0], { set: new Map([['author', '{"id":1}']]), remove: new Set(['authorId']) });
    assert.equal(edits[1], undefined);
    assert.equal(addedBytes, ',"author":'.length + '{"id":1}'.length);
    assert.deepEqual(failures, [
      { callIndex: 1, rule: 1 },
      { callIndex: 2, rule: 0 },
    ]);
    // Items without each rule's tag: author fails for item 1; group (a shared call) for both.
    assert.deepEqual(failedItems, [1, 2]);
  });
});
