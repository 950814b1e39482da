// A read that live changes may ask for many times a second: at most one run in flight and one
// more queued, which answers every ask made while the first ran.
export function coalesced(run: () => Promise<void>, onError: (err: unknown) => void): () => Promise<void> {
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const ask = (): Promise<void> => {
    if (!running) {
      running = run()
        .catch(onError)
        .finally(() => {
          running = null;
        });
      return running;
    }
    queued ??= running.then(() => {
      queued = null;
      return ask();
    });
    return queued;
  };
  return ask;
}
