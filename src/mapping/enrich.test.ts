import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mappingDropSet } from './enrich.js';

describe('mappingDropSet', () => {
  it("adds accept-encoding to the pipeline's drop set (made once per route), leaving that set as it was", () => {
    const pipelineSet: ReadonlySet<string> = new Set(['host', 'connection']);
    const set = mappingDropSet(pipelineSet);
    assert.deepEqual([...set].sort(), ['accept-encoding', 'connection', 'host']);
    assert.deepEqual([...pipelineSet].sort(), ['connection', 'host']);
  });
});
