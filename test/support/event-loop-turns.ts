/**
 * How many times the event loop turned (a `setImmediate` chain) while `run` was under way: 0 when
 * `run` held the loop from start to end, more when it let other work in between its steps.
 * @example assert.ok((await turnsDuring(() => loadInSteps(file))) >= 2);
 */
export async function turnsDuring(run: () => unknown): Promise<number> {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  await run();
  done = true;
  return turns;
}
