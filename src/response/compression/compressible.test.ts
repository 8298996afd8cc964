import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileCompressibleTypes } from './compressible.js';
import { DEFAULT_COMPRESSIBLE_TYPES } from '../../config/schema/compression.js';

describe('compressible media types', () => {
  const isCompressible = compileCompressibleTypes(DEFAULT_COMPRESSIBLE_TYPES);

  it('the defaults: JSON, text, JavaScript, SVG, XML and their suffixes', () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/problem+json',
      'application/vnd.api+json',
      'text/html',
      'text/plain;charset=utf-8',
      'text/css',
      'application/javascript',
      'image/svg+xml',
      'application/xml',
      'application/atom+xml',
    ])
      assert.equal(isCompressible(type), true, type);
  });

  it('never binary types, never an event stream, never an answer without a type', () => {
    for (const type of [
      'image/png',
      'application/octet-stream',
      'video/mp4',
      'application/zip',
      'text/event-stream',
      'text/event-stream; charset=utf-8',
      'json',
      '',
    ])
      assert.equal(isCompressible(type), false, type);
    assert.equal(isCompressible(undefined), false);
  });

  it('a configured list replaces the defaults', () => {
    const only = compileCompressibleTypes(['application/json', 'application/*+yaml']);
    assert.equal(only('application/json'), true);
    assert.equal(only('application/openapi+yaml'), true);
    assert.equal(only('text/html'), false);
    assert.equal(only('text/event-stream'), false);
  });
});
