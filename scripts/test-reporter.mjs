/**
 * The `npm test` reporter (node:test custom reporter, `--test-reporter=./scripts/test-reporter.mjs`):
 * one line per test file as it finishes, then every failure in full (file:line:col, the test's
 * suite path, the error with its diff and stack, and the file's last output lines), then one plain
 * line `N passed, N failed`. The exit code is the runner's: non-zero when anything failed.
 *
 * Design note. The runner reports each file's events as one block, files in the order given, while
 * the `test:complete` of a file's own test (named by the file's path, nesting 0) comes when the file
 * finishes, which may be before its block is reported. So a file's line is printed once both are
 * seen: its complete, and the end of its block (the next file's block starts, or the stream ends).
 * Counts and failures come from `test:pass` / `test:fail`, in declaration order within the block,
 * so a stack of `test:start` names gives each failure its suite path. A file that fails outside
 * any test (a syntax error, an exception at load, a non-zero exit) has its error on the file's
 * own test. Failures caused by another one (a test cancelled
 * because its `before` hook failed, a suite whose tests failed) are counted, but only the cause is
 * printed in full.
 *
 * Plain JavaScript: the runner loads its reporter before `--import tsx` applies.
 */
import { relative, resolve } from 'node:path';
import { inspect } from 'node:util';
import process from 'node:process';

/** Output lines kept per file, shown only when the file has a failure. */
const KEPT_OUTPUT_LINES = 40;
/** Lines of one printed error; a longer one is cut. */
const MAX_ERROR_LINES = 120;
/**
 * The events node reports in declaration order, in the file's block. The others (enqueue, dequeue,
 * complete, output lines) come as things happen, possibly in the middle of another file's block.
 */
const BLOCK_EVENTS = new Set(['test:start', 'test:pass', 'test:fail', 'test:plan']);

function failureType(error) {
  const t = error?.failureType;
  return typeof t === 'string' ? t : undefined;
}

/** The test's own error: node wraps it in an ERR_TEST_FAILURE whose `cause` is what was thrown. */
function rootError(error) {
  return error?.code === 'ERR_TEST_FAILURE' && error.cause !== undefined ? error.cause : error;
}

function formatError(error, depth = 0) {
  const root = rootError(error);
  if (!(root instanceof Error) && typeof root?.stack !== 'string')
    return inspect(root, { depth: 4, colors: false, breakLength: 120 });
  // The stack starts with the message (an assertion's message holds its diff); node's own frames are noise.
  const lines = String(root.stack ?? `${root.name}: ${root.message}`)
    .split('\n')
    .filter((l) => !/^\s+at (?:.*\()?node:internal\//.test(l) && !/^\s+at (?:.*\()?node:async_hooks/.test(l));
  if (typeof root.code === 'string' && root.code !== 'ERR_ASSERTION' && !lines[0].includes(root.code))
    lines.push(`  code: ${root.code}`);
  if (root.cause !== undefined && depth < 3)
    lines.push(`  cause: ${formatError(root.cause, depth + 1).replaceAll('\n', '\n  ')}`);
  if (lines.length > MAX_ERROR_LINES)
    return [...lines.slice(0, MAX_ERROR_LINES), `    ... ${lines.length - MAX_ERROR_LINES} more lines`].join('\n');
  return lines.join('\n');
}

function seconds(ms) {
  return ms === undefined ? '' : `${(ms / 1000).toFixed(1)}s`;
}

/** node:test reporter: an async generator over the runner's events, yielding text. */
export default async function* reporter(source) {
  /** file path -> counts, the suite-name stack, the last output lines, and where its line stands */
  const files = new Map();
  /** { where, title, error, output } in the order they happened */
  const failures = [];
  /** `where  suite > test: reason` of each skipped test or suite */
  const skips = [];
  const cwd = process.cwd();
  const show = (file) => (file === undefined ? '(no file)' : relative(cwd, file) || file);

  const stateOf = (file) => {
    // Output events name the file as given on the command line, results by its absolute path.
    const key = file === undefined ? '' : resolve(file);
    let s = files.get(key);
    if (s === undefined) {
      s = {
        file: key,
        passed: 0,
        failed: 0,
        skipped: 0,
        cancelled: 0,
        printed: false,
        fileFailureRecorded: false,
        names: [],
        output: [],
        durationMs: undefined,
        completed: false,
        blockEnded: false,
      };
      files.set(key, s);
    }
    return s;
  };
  // The file's own test is named by the path as given on the command line (absolute on Node 20).
  const isFileTest = (d) =>
    d.nesting === 0 && d.file !== undefined && typeof d.name === 'string' && resolve(d.name) === d.file;
  const where = (d) => `${show(d.file)}${d.line === undefined ? '' : `:${d.line}:${d.column ?? 1}`}`;
  /** The file whose block is being reported. */
  let current;
  const fileLine = (s, durationMs = s.durationMs) => {
    s.printed = true;
    const mark = s.failed > 0 || s.fileFailureRecorded ? 'FAIL' : 'ok  ';
    const counts = [`${s.passed} passed`];
    if (s.failed > 0) counts.push(`${s.failed} failed`);
    if (s.skipped > 0) counts.push(`${s.skipped} skipped`);
    return `${mark} ${show(s.file || undefined)}  ${counts.join(', ')}${durationMs === undefined ? '' : `  ${seconds(durationMs)}`}\n`;
  };
  const recordFileFailure = (s, d, error) => {
    if (s.fileFailureRecorded) return;
    s.fileFailureRecorded = true;
    failures.push({ where: where(d), title: '(the file itself: it failed outside any test)', error, output: s.output });
  };

  const ready = (s) => !s.printed && s.completed && s.blockEnded;
  for await (const event of source) {
    const d = event.data;
    const inBlock = BLOCK_EVENTS.has(event.type);
    if (inBlock && d?.file !== undefined && resolve(d.file) !== current?.file) {
      const previous = current;
      current = stateOf(d.file);
      if (previous !== undefined) {
        previous.blockEnded = true;
        if (ready(previous)) yield fileLine(previous);
      }
    }
    switch (event.type) {
      case 'test:start': {
        const d = event.data;
        if (isFileTest(d)) break;
        const s = stateOf(d.file);
        s.names.length = d.nesting;
        s.names[d.nesting] = d.name;
        break;
      }
      case 'test:pass': {
        const d = event.data;
        if (isFileTest(d)) break;
        const s = stateOf(d.file);
        // A skip says why (a missing browser, say): the reason is printed with the totals.
        if (d.skip !== undefined) {
          const path = [...s.names.slice(0, d.nesting), d.name].join(' > ');
          skips.push(`${where(d)}  ${path}${typeof d.skip === 'string' ? `: ${d.skip}` : ''}`);
        }
        if (d.details.type === 'suite') {
          if (d.skip !== undefined) s.skipped++;
          break;
        }
        if (d.skip !== undefined || d.todo !== undefined) s.skipped++;
        else s.passed++;
        break;
      }
      case 'test:fail': {
        const d = event.data;
        const s = stateOf(d.file);
        const type = failureType(d.details.error);
        if (isFileTest(d)) {
          if (type !== 'subtestsFailed') recordFileFailure(s, d, d.details.error);
          break;
        }
        if (d.todo !== undefined) {
          s.skipped++;
          break;
        }
        const suite = d.details.type === 'suite';
        if (!suite) s.failed++;
        // A suite failing only because its tests failed, or a test cancelled by its parent, is a
        // consequence: the cause is printed, these are counted.
        if (type === 'subtestsFailed') break;
        if (type === 'cancelledByParent') {
          s.cancelled++;
          break;
        }
        if (suite) s.failed++;
        const path = [...s.names.slice(0, d.nesting), d.name].join(' > ');
        failures.push({ where: where(d), title: path, error: d.details.error, output: s.output });
        break;
      }
      case 'test:complete': {
        const d = event.data;
        if (!isFileTest(d)) break;
        const s = stateOf(d.file);
        const type = failureType(d.details.error);
        if (!d.details.passed && type !== 'subtestsFailed' && d.details.error !== undefined)
          recordFileFailure(s, d, d.details.error);
        s.completed = true;
        s.durationMs = d.details.duration_ms;
        if (s !== current && s.passed + s.failed + s.skipped > 0) s.blockEnded = true;
        if (ready(s)) yield fileLine(s);
        break;
      }
      case 'test:stdout':
      case 'test:stderr': {
        const s = stateOf(event.data.file);
        for (const line of event.data.message.split('\n')) if (line !== '') s.output.push(line);
        if (s.output.length > KEPT_OUTPUT_LINES) s.output.splice(0, s.output.length - KEPT_OUTPUT_LINES);
        break;
      }
      default:
        break;
    }
  }

  for (const s of files.values())
    if (!s.printed && s.file !== '' && (s.completed || s.passed > 0 || s.failed > 0 || s.fileFailureRecorded))
      yield fileLine(s);

  let failed = 0;
  let passed = 0;
  let skipped = 0;
  let cancelled = 0;
  for (const s of files.values()) {
    passed += s.passed;
    failed += s.failed + (s.fileFailureRecorded ? 1 : 0);
    skipped += s.skipped;
    cancelled += s.cancelled;
  }
  for (const [i, f] of failures.entries()) {
    yield `\n${'='.repeat(100)}\nFAILURE ${i + 1}/${failures.length}: ${f.where}\n  ${f.title}\n\n${formatError(f.error)}\n`;
    if (f.output.length > 0)
      yield `\n  last output lines of the file:\n${f.output.map((l) => `  | ${l}`).join('\n')}\n`;
  }
  if (cancelled > 0)
    yield `\n(${cancelled} more test(s) failed because a hook or parent above failed; they are in the counts, not printed)\n`;
  if (skips.length > 0) yield `\nSkipped:\n${skips.map((l) => `  ${l}`).join('\n')}\n`;
  if (skipped > 0) yield `\n${skipped} skipped or todo\n`;
  // The failures once more, one line each, right above the totals: `npm test | tail` keeps them.
  if (failures.length > 0)
    yield `\nFailed:\n${failures.map((f) => `  ${f.where}  ${f.title.split('\n')[0]}`).join('\n')}\n`;
  yield `\n${passed} passed, ${failed} failed\n`;
}
