/**
 * Starts a test's HTTP server on the loopback at an ephemeral port, and closes it with every
 * connection still open (a stalled response would otherwise keep `close()` waiting).
 */
import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export async function listenOnLoopback(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const socket of sockets) socket.destroy();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
