// SPDX-License-Identifier: Apache-2.0
// The owner's MCP servers' tools change while a client is connected to `boxmaker mcp`: run by
// run-sdk.sh, whose brokerd BX_WORK/lists.sock (config BX_WORK/lists.yaml, pid BX_LISTS_PID)
// runs fake.so answering every call, a server's tools/list included, with one tool `echo`, and
// has listed its one server, notes, before this runs.  The test adds a server to the config
// and reloads brokerd (SIGHUP), as an owner would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const boxmaker = process.env.BX_BOXMAKER;
const work = process.env.BX_WORK;
const notes = `${work}/notes`;

// One JSON-RPC request to `boxmaker mcp --http` on the Unix socket PATH: its result.
function post (path, id, method, params = {}) {
  return new Promise ((resolve, reject) => {
    const req = http.request ({ socketPath: path, path: '/mcp', method: 'POST',
                                headers: { 'Content-Type': 'application/json',
                                           'Accept': 'application/json, text/event-stream',
                                           'MCP-Protocol-Version': '2025-11-25' } }, (res) => {
      let body = '';
      res.setEncoding ('utf8');
      res.on ('data', (d) => { body += d; });
      res.on ('end', () => resolve (JSON.parse (body).result));
    });
    req.on ('error', reject);
    req.end (JSON.stringify ({ jsonrpc: '2.0', id, method, params }));
  });
}

test ('a reload that lists a new server tells the client, and tools/list then has its tool',
      async () => {
  const client = new Client ({ name: 'boxmaker-listchanged-test', version: '1.0.0' });
  let changes = 0;
  let wake = null;
  client.setNotificationHandler (ToolListChangedNotificationSchema, async () => {
    changes++;
    if (wake !== null)
      {
        const w = wake;
        wake = null;
        w ();
      }
  });
  await client.connect (new StdioClientTransport ({
    command: boxmaker,
    args: ['mcp', '--socket', `${work}/lists.sock`, '--timeout-ms', '20000',
           '--refresh-ms', '200'],
    stderr: 'pipe' }));
  // The same over HTTP, which cannot notify: a tools/list asks again once its answer is old.
  const httpSock = `${work}/lists-http.sock`;
  const httpServer = spawn (boxmaker, ['mcp', '--socket', `${work}/lists.sock`,
                                       '--refresh-ms', '200', '--http', httpSock],
                            { stdio: ['ignore', 'ignore', 'ignore'] });
  try
    {
      while (!existsSync (httpSock))
        {
          assert.equal (httpServer.exitCode, null, 'boxmaker mcp --http ended');
          await sleep (50);
        }
      const httpInit = await post (httpSock, 1, 'initialize', {
        protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } });
      assert.deepEqual (httpInit.capabilities.tools, { listChanged: false });
      assert.deepEqual ((await post (httpSock, 2, 'tools/list')).tools.map ((t) => t.name),
                        ['read_file', 'notes.echo']);

      assert.deepEqual (client.getServerCapabilities ().tools, { listChanged: true });
      const instructions = client.getInstructions ();
      assert.ok (instructions.includes (`\n- read_file: Granted: the folder ${notes}.`),
                 instructions);
      assert.ok (instructions.includes (
        `\n- notes.echo: tools of the MCP server notes, run under grant 2. Granted: the folder ${notes} (read-only).`),
                 instructions);
      assert.ok (!instructions.includes ('more.echo'), instructions);
      let names = (await client.listTools ()).tools.map ((t) => t.name);
      assert.deepEqual (names, ['read_file', 'notes.echo']);
      // Nothing changed yet: nothing was said.
      assert.equal (changes, 0);

      appendFileSync (`${work}/lists.yaml`, `  - mcp_server:
      name: more
      command: [python3, /srv/mcp/server.py]
    paths: [${notes}]
    writable: false
`);
      process.kill (Number (process.env.BX_LISTS_PID), 'SIGHUP');
      // brokerd lists the servers again in the background; each change the watcher sees is a
      // notification, after which the list is asked again, until it has the new tool.
      for (;;)
        {
          if (changes === 0)
            await new Promise ((resolve) => { wake = resolve; });
          changes = 0;
          names = (await client.listTools ()).tools.map ((t) => t.name);
          if (names.includes ('more.echo'))
            break;
        }
      assert.deepEqual (names, ['read_file', 'notes.echo', 'more.echo']);
      // The new tool is one tools/call takes (brokerd runs it), not an unknown tool.
      const r = await client.callTool ({ name: 'more.echo', arguments: {} });
      assert.equal (r._meta['boxmaker/outcome'], 'result', JSON.stringify (r));

      for (let id = 3; ; id++)
        {
          const httpNames = (await post (httpSock, id, 'tools/list')).tools.map ((t) => t.name);
          if (httpNames.includes ('more.echo'))
            {
              assert.deepEqual (httpNames, ['read_file', 'notes.echo', 'more.echo']);
              break;
            }
          await sleep (100);
        }
    }
  finally
    {
      httpServer.kill ('SIGTERM');
      await client.close ();
    }
});

// A brokerd that accepts and never answers: every grants_request waits for its deadline.
test ('a brokerd that never answers holds up neither the client\'s messages nor the end',
      async () => {
  const muteSock = `${work}/mute.sock`;
  const held = [];
  let accepted = 0;
  let moreAccepted = null;
  const broker = net.createServer ((conn) => {
    held.push (conn);
    conn.on ('error', () => {});
    accepted++;
    if (moreAccepted !== null && accepted >= 2)
      moreAccepted ();
  });
  broker.listen (muteSock);
  await once (broker, 'listening');
  try
    {
      const mcp = spawn (boxmaker, ['mcp', '--socket', muteSock, '--refresh-ms', '100'],
                         { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      const waiters = [];
      mcp.stdout.setEncoding ('utf8');
      mcp.stdout.on ('data', (d) => {
        out += d;
        for (const w of waiters.splice (0))
          w ();
      });
      mcp.stderr.resume ();
      const answer = async (id) => {
        for (;;)
          {
            // Whole lines only: the last part is still being written.
            const line = out.split ('\n').slice (0, -1).find ((l) => l.includes (`"id":${id},`));
            if (line !== undefined)
              return JSON.parse (line);
            await new Promise ((resolve) => waiters.push (resolve));
          }
      };
      const send = (msg) => mcp.stdin.write (JSON.stringify ({ jsonrpc: '2.0', ...msg }) + '\n');
      send ({ id: 1, method: 'initialize',
              params: { protocolVersion: '2025-11-25', capabilities: {},
                        clientInfo: { name: 't', version: '1' } } });
      const init = await answer (1);
      assert.match (init.result.instructions, /could not be reached to learn what was granted/);
      send ({ method: 'notifications/initialized' });
      // The watcher asks again: a second connection, held open by the mute broker.
      if (accepted < 2)
        await new Promise ((resolve) => { moreAccepted = resolve; });
      send ({ id: 2, method: 'ping' });
      send ({ id: 3, method: 'tools/list' });
      assert.deepEqual ((await answer (2)).result, {});
      assert.deepEqual ((await answer (3)).result.tools.map ((t) => t.name),
                        ['read_file', 'write_file', 'shell', 'http_fetch']);
      // Closing standard input ends it, within the ask's deadline, with status 0.
      const exited = once (mcp, 'exit');
      mcp.stdin.end ();
      const [code, signal] = await exited;
      assert.equal (signal, null);
      assert.equal (code, 0);
      assert.ok (!out.includes ('list_changed'), out);
    }
  finally
    {
      for (const c of held)
        c.destroy ();
      broker.close ();
    }
});

// A client that says it is ready before it asked to initialize has not read the capability a
// list_changed depends on: until an initialize is answered, brokerd is not asked again.
test ('notifications/initialized before initialize starts no asking again', async () => {
  const countSock = `${work}/count.sock`;
  let accepted = 0;
  const waiters = [];
  const broker = net.createServer ((conn) => {
    accepted++;
    conn.on ('error', () => {});
    conn.destroy ();
    for (const w of waiters.splice (0))
      w ();
  });
  broker.listen (countSock);
  await once (broker, 'listening');
  const mcp = spawn (boxmaker, ['mcp', '--socket', countSock, '--refresh-ms', '100'],
                     { stdio: ['pipe', 'pipe', 'pipe'] });
  try
    {
      let out = '';
      const readers = [];
      mcp.stdout.setEncoding ('utf8');
      mcp.stdout.on ('data', (d) => {
        out += d;
        for (const w of readers.splice (0))
          w ();
      });
      let err = '';
      mcp.stderr.setEncoding ('utf8');
      mcp.stderr.on ('data', (d) => { err += d; });
      mcp.on ('exit', () => {
        for (const w of readers.splice (0))
          w ();
      });
      const answer = async (id) => {
        for (;;)
          {
            const line = out.split ('\n').slice (0, -1).find ((l) => l.includes (`"id":${id},`));
            if (line !== undefined)
              return JSON.parse (line);
            assert.equal (mcp.exitCode, null, `boxmaker mcp ended: ${err}`);
            await new Promise ((resolve) => readers.push (resolve));
          }
      };
      const send = (msg) => mcp.stdin.write (JSON.stringify ({ jsonrpc: '2.0', ...msg }) + '\n');
      send ({ method: 'notifications/initialized' });
      send ({ id: 1, method: 'ping' });
      assert.deepEqual ((await answer (1)).result, {});
      // Ten refresh periods: a watcher started by that notification would have asked by now
      // (on a machine too busy for that, this part proves nothing and still passes).
      await sleep (1000);
      assert.equal (accepted, 0, 'brokerd was asked before any initialize');
      send ({ id: 2, method: 'initialize',
              params: { protocolVersion: '2025-11-25', capabilities: {},
                        clientInfo: { name: 't', version: '1' } } });
      assert.deepEqual ((await answer (2)).result.capabilities.tools, { listChanged: true });
      assert.equal (accepted, 1, 'initialize asks brokerd once');
      // Once the client says so after that answer, the watcher asks again.
      send ({ method: 'notifications/initialized' });
      while (accepted < 2)
        await new Promise ((resolve) => waiters.push (resolve));
      const exited = once (mcp, 'exit');
      mcp.stdin.end ();
      const [code] = await exited;
      assert.equal (code, 0);
    }
  finally
    {
      mcp.kill ('SIGKILL');
      broker.close ();
    }
});

// Over HTTP every session shares what is kept: an initialize whose ask fails (brokerd
// restarting) keeps the answer another session's initialize had, rather than listing every
// tool without its grants until the next refresh.
test ('over HTTP a failed initialize keeps the grants already known', async () => {
  const proxySock = `${work}/flaky.sock`;
  const httpSock = `${work}/flaky-http.sock`;
  let up = true;
  const proxy = net.createServer ((conn) => {
    conn.on ('error', () => {});
    if (!up)
      return conn.destroy ();
    const broker = net.connect (`${work}/lists.sock`);
    broker.on ('error', () => conn.destroy ());
    conn.pipe (broker).pipe (conn);
  });
  proxy.listen (proxySock);
  await once (proxy, 'listening');
  const server = spawn (boxmaker, ['mcp', '--socket', proxySock, '--refresh-ms', '3600000',
                                   '--http', httpSock], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  server.stderr.setEncoding ('utf8');
  server.stderr.on ('data', (d) => { err += d; });
  try
    {
      while (!existsSync (httpSock))
        {
          assert.equal (server.exitCode, null, `boxmaker mcp --http ended: ${err}`);
          await sleep (50);
        }
      const init = { protocolVersion: '2025-11-25', capabilities: {},
                     clientInfo: { name: 't', version: '1' } };
      await post (httpSock, 1, 'initialize', init);
      const granted = (await post (httpSock, 2, 'tools/list')).tools.map ((t) => t.name);
      assert.ok (granted.includes ('notes.echo') && !granted.includes ('shell'), granted);
      up = false;
      const second = await post (httpSock, 3, 'initialize', init);
      assert.ok (err.includes ('boxmaker mcp: cannot learn the grants: '), err);
      assert.ok (second.instructions.includes ('notes.echo'), second.instructions);
      assert.deepEqual ((await post (httpSock, 4, 'tools/list')).tools.map ((t) => t.name),
                        granted);
    }
  finally
    {
      server.kill ('SIGTERM');
      proxy.close ();
    }
});
