/**
 * How long the event loop was held: the longest gap between ticks of a 1 ms timer, from the call
 * until the returned function is called (which stops the timer and answers in ms, the wait since
 * the last tick included).
 */
export function watchTimerGaps(): () => number {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  return () => {
    clearInterval(timer);
    return Math.max(longest, performance.now() - last);
  };
}
