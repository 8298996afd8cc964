import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redactRedisUrl, redisUrlProblem } from './redis-url.js';

describe('redisUrlProblem', () => {
  const table: { url: string; problem: string | undefined }[] = [
    { url: 'redis://cache:6379', problem: undefined },
    { url: 'rediss://user:p%40ss@cache.example.com:6380/2', problem: undefined },
    { url: 'redis://:secret@10.0.0.5', problem: undefined },
    { url: 'cache:6379', problem: 'scheme cache: is not redis: or rediss:' },
    { url: 'http://cache:6379', problem: 'scheme http: is not redis: or rediss:' },
    { url: 'not a url', problem: '"not a url" is not a URL (expected redis://host:6379 or rediss://host:6380)' },
    { url: 'redis://cache:6379/zero', problem: '"/zero" is not a database number' },
    { url: 'redis://cache:6379?db=1', problem: 'query and fragment are not read: put the settings under config.redis' },
  ];
  for (const c of table) it(c.url, () => assert.equal(redisUrlProblem(c.url), c.problem));
});

describe('redactRedisUrl', () => {
  it('hides the password, keeps the user and the host', () => {
    assert.equal(redactRedisUrl('redis://app:s3cret@cache:6379/1'), 'redis://app:***@cache:6379/1');
    assert.equal(redactRedisUrl('rediss://:s3cret@cache:6380'), 'rediss://:***@cache:6380');
    assert.equal(redactRedisUrl('redis://cache:6379'), 'redis://cache:6379');
  });

  it('hides a password that holds @ or :, whole, as the URL parser reads it', () => {
    assert.equal(redactRedisUrl('redis://default:horse@battery@cache:6379'), 'redis://default:***@cache:6379');
    assert.equal(redactRedisUrl('redis://default:a:b@cache:6379/2'), 'redis://default:***@cache:6379/2');
    // An unencoded / ends the authority: the text does not parse, and all before the last @ goes.
    assert.equal(redactRedisUrl('redis://default:a/b@cache:6379/2'), 'redis://***@cache:6379/2');
  });

  it('hides everything before the last @ of a URL it cannot parse', () => {
    assert.equal(redactRedisUrl('redis://default:pa ss@word@ca che:6379'), 'redis://***@ca che:6379');
  });
});
