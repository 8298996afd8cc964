import { strict as assert } from 'node:assert';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { RouteTally, WarnLog, establishedOnPort, fdCount, rssSlopePerMin } from './soak-stats.js';

describe('rssSlopePerMin', () => {
  it('gives the least-squares slope in MB per minute', () => {
    const samples = [0, 5, 10, 15, 20].map((s) => ({
      tMs: s * 1000,
      mb: 100 + s * 0.05 + (s % 10 === 0 ? 0.1 : -0.1),
    }));
    // 0.05 MB a second is 3 MB a minute; the alternating noise does not move a least-squares fit far.
    assert.ok(Math.abs(rssSlopePerMin(samples)! - 3) < 0.5, String(rssSlopePerMin(samples)));
    assert.equal(
      rssSlopePerMin([
        { tMs: 0, mb: 80 },
        { tMs: 5_000, mb: 80 },
        { tMs: 10_000, mb: 80 },
      ]),
      0,
    );
  });

  it('says nothing from fewer than three samples or no time span', () => {
    assert.equal(
      rssSlopePerMin([
        { tMs: 0, mb: 1 },
        { tMs: 1, mb: 2 },
      ]),
      undefined,
    );
    assert.equal(
      rssSlopePerMin([
        { tMs: 5, mb: 1 },
        { tMs: 5, mb: 2 },
        { tMs: 5, mb: 3 },
      ]),
      undefined,
    );
  });
});

describe('WarnLog', () => {
  it('counts lines per minute since its start and by message', () => {
    const log = new WarnLog(1_000_000);
    log.add({ time: 1_000_000 + 10_000, msg: 'a', byDesign: false });
    log.add({ time: 1_000_000 + 70_000, msg: 'b', byDesign: false });
    log.add({ time: 1_000_000 + 130_000, msg: 'a', byDesign: false });
    assert.deepEqual(log.perMinute, [1, 1, 1]);
    assert.deepEqual(log.top(1), [['a', 2]]);
    assert.equal(log.total, 3);
  });

  it('rates outage windows per minute, the lines by design apart, clipped at now', () => {
    const log = new WarnLog(0);
    const w = log.openWindow(60_000, Number.POSITIVE_INFINITY);
    for (let i = 0; i < 10; i++) log.add({ time: 61_000 + i, msg: 'mapping failed', byDesign: false });
    log.add({ time: 62_000, msg: 'request 504', byDesign: true });
    log.add({ time: 10_000, msg: 'before the outage', byDesign: false });
    // Still open: the window runs to `now` (30 s = half a minute).
    assert.deepEqual(log.outageRate(90_000), { minutes: 0.5, all: 11, outage: 10, allPerMin: 22, outagePerMin: 20 });
    w.setEnd(75_000);
    log.add({ time: 80_000, msg: 'after the window', byDesign: false });
    assert.equal(log.outageRate(200_000)?.outage, 10);
    assert.equal(log.outageRate(200_000)?.minutes, 0.25);
  });

  it('has no rate before any window', () => {
    assert.equal(new WarnLog(0).outageRate(10_000), undefined);
  });
});

describe('RouteTally', () => {
  it('counts outcomes and keeps a bounded sample of unexpected ones', () => {
    const t = new RouteTally('r', 'contract', 2);
    t.record('200');
    t.record('200');
    t.record('502', 'first');
    t.record('error:ECONNRESET', 'second');
    t.fail('third');
    assert.equal(t.sent, 4);
    assert.equal(t.unexpected, 3);
    assert.deepEqual(t.samples, ['first', 'second']);
    assert.equal(t.outcomeText(), '200: 2, 502: 1, error:ECONNRESET: 1');
  });
});

describe('/proc readings', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  after(() => {
    for (const s of sockets) s.destroy();
    return Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('counts the established connections of a local listener, and this process has fds', async () => {
    const server = createServer((s) => {
      sockets.push(s);
      s.on('error', () => {});
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    assert.equal(establishedOnPort(port), 0);
    const client = connect(port, '127.0.0.1');
    sockets.push(client);
    await new Promise((r) => server.once('connection', r));
    assert.equal(establishedOnPort(port), 1);
    assert.ok((fdCount(process.pid) ?? 0) > 2);
    assert.equal(fdCount(-1), undefined);
  });
});
