// Reads from the HTTP API with a time limit and one retry: a request that went out on a dead
// keep-alive connection (a network that silently stopped forwarding) would otherwise wait for
// minutes, and a page must not wait on it.

export async function getApi(url: string, timeoutMs = 8000): Promise<Response | null> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const abort = new AbortController();
    const timer = window.setTimeout(() => abort.abort(), timeoutMs);
    try {
      return await fetch(url, { signal: abort.signal });
    } catch {
      /* timed out or the network failed: once more, on a fresh connection */
    } finally {
      window.clearTimeout(timer);
    }
  }
  return null;
}
