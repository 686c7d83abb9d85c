/**
 * Waits until a terminal pane (read by `capture`, e.g. tmux's capture-pane) shows what `test`
 * looks for. Polling is the only way to see another process's screen: tmux has no "wait for text".
 */
export async function waitForPane(capture: () => string, what: string, test: (screen: string) => boolean, timeoutMs: number, pollMs = 40): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const screen = capture();
    if (test(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${screen}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
