/**
 * Spends `us` µs of this process's CPU at once, in one turn of the event loop: the same-shape
 * baselines' stand-in for what a framework costs per event or per request.
 */
export function spin(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}
