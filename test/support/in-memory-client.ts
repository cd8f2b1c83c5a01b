/** Test support: an SDK Client linked to a server over InMemoryTransport, both closed after the test. */
import type { TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Anything that connects to a transport and closes: an McpServer or an S2SPServer. */
export interface Connectable {
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/** Connects a fresh Client to `server`; the test's teardown closes the client, then the server. */
export async function connectInMemory(server: Connectable, t: TestContext): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-agent', version: '0.0.0' });
  await client.connect(clientSide);
  t.after(async () => {
    await client.close();
    await server.close();
  });
  return client;
}
