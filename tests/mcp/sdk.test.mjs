// SPDX-License-Identifier: Apache-2.0
// The official MCP TypeScript SDK against `boxmaker mcp`: run by run-sdk.sh, which starts
// the brokerds (BX_WORK/echo.sock answers at once with fake.so's echo, BX_WORK/slow.sock
// after 400 ms) and sets BX_BOXMAKER.  With BX_MODE=podman only the real call runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { auth as oauthFlow, extractWWWAuthenticateParams,
         discoverOAuthProtectedResourceMetadata, discoverAuthorizationServerMetadata }
  from '@modelcontextprotocol/sdk/client/auth.js';
import AjvModule from 'ajv';
const Ajv = AjvModule.default ?? AjvModule;

const boxmaker = process.env.BX_BOXMAKER;
const work = process.env.BX_WORK;
const mode = process.env.BX_MODE || 'fake';
const data = `${work}/data`;
const echoSock = `${work}/echo.sock`;
const slowSock = `${work}/slow.sock`;

async function stdioClient (socket, extra = []) {
  const client = new Client ({ name: 'boxmaker-sdk-test', version: '1.0.0' });
  const transport = new StdioClientTransport ({
    command: boxmaker, args: ['mcp', '--socket', socket, '--timeout-ms', '20000', ...extra],
    stderr: 'pipe',
  });
  await client.connect (transport);
  return client;
}

const text = (r) => r.content.map ((c) => c.text).join ('');

if (mode === 'podman')
  {
    test ('one tools/call runs for real through podman', async () => {
      const client = await stdioClient (echoSock, ['--timeout-ms', '120000']);
      try
        {
          const r = await client.callTool ({ name: 'read_file',
                                             arguments: { path: `${data}/hello.txt` } },
                                           undefined, { timeout: 120000 });
          assert.equal (r.isError, false, text (r));
          assert.equal (text (r), 'hello through MCP\n');
          assert.equal (r._meta['boxmaker/class'], 'internal');
          const sh = await client.callTool ({ name: 'shell',
                                              arguments: { command: 'cat hello.txt; exit 3',
                                                           cwd: data } },
                                            undefined, { timeout: 120000 });
          assert.equal (sh.isError, false, text (sh));
          assert.match (text (sh), /^hello through MCP\n[\s\S]*\[exit 3\]$/);
          // toolkit's own refusal (exit status 1) is an error, not file content.
          const missing = await client.callTool ({ name: 'read_file',
                                                   arguments: { path: `${data}/missing.txt` } },
                                                 undefined, { timeout: 120000 });
          assert.equal (missing.isError, true, text (missing));
          assert.equal (missing._meta['boxmaker/outcome'], 'refused');
          assert.equal (text (missing), `read_file: ${data}/missing.txt: no such file or directory`);
        }
      finally
        {
          await client.close ();
        }
    });
  }
else
  {
    // A broker the test scripts itself, speaking docs/protocol.md's frames: "/pending" gets
    // a pending_approval frame then a result; "/hang" gets nothing, and the moment its
    // connection closes is recorded.
    const scripted = { closedAt: null, connectedAt: null };
    const scriptedSock = `${work}/scripted.sock`;
    const frame = (obj) => {
      const body = Buffer.from (JSON.stringify (obj));
      const head = Buffer.alloc (4);
      head.writeUInt32BE (body.length);
      return Buffer.concat ([head, body]);
    };
    const broker = net.createServer ((conn) => {
      let buf = Buffer.alloc (0);
      conn.on ('error', () => {});
      conn.on ('data', (chunk) => {
        buf = Buffer.concat ([buf, chunk]);
        if (buf.length < 4 || buf.length < 4 + buf.readUInt32BE (0))
          return;
        const req = JSON.parse (buf.subarray (4, 4 + buf.readUInt32BE (0)).toString ());
        const id = req.id;
        // A grants_request at initialize: answered as a brokerd older than it would.
        if (req.msg.type === 'grants_request')
          {
            conn.end (frame ({ v: 1, id, final: true,
                               msg: { type: 'error',
                                      detail: 'unexpected message: expected a tool_request' } }));
            return;
          }
        const path = req.msg.arguments.path;
        if (path === '/hang')
          {
            scripted.connectedAt = Date.now ();
            conn.on ('close', () => { scripted.closedAt = Date.now (); });
            return;
          }
        conn.write (frame ({ v: 1, id, final: false,
                             msg: { type: 'pending_approval', approval: 'read /pending',
                                    expires: Date.now () + 60000 } }));
        setTimeout (() => conn.end (frame ({ v: 1, id, final: true,
                                             msg: { type: 'result', content: 'approved',
                                                    class: 'public', untrusted: true,
                                                    truncated: false } })), 300);
      });
    });
    broker.listen (scriptedSock);
    await once (broker, 'listening');
    test.after (() => broker.close ());

    test ('initialize negotiates the latest revision and lists four tools with strict schemas',
          async () => {
      const client = await stdioClient (echoSock);
      try
        {
          assert.equal (client.getServerVersion ().name, 'boxmaker');
          // Over stdio the server says when its tools change (listchanged.test.mjs).
          assert.deepEqual (client.getServerCapabilities ().tools, { listChanged: true });
          const { tools } = await client.listTools ();
          assert.deepEqual (tools.map ((t) => t.name), ['read_file', 'write_file', 'shell',
                                                         'http_fetch']);
          const ajv = new Ajv ({ strict: true });
          for (const t of tools)
            {
              assert.equal (t.inputSchema.type, 'object');
              assert.equal (t.inputSchema.additionalProperties, false);
              assert.ok (t.description.length > 40, t.name);
              ajv.compile (t.inputSchema); // a valid JSON Schema, strict mode
            }
          const by = Object.fromEntries (tools.map ((t) => [t.name, t]));
          assert.equal (by.read_file.annotations.readOnlyHint, true);
          assert.equal (by.write_file.annotations.destructiveHint, true);
          assert.equal (by.shell.annotations.destructiveHint, true);
          assert.equal (by.http_fetch.annotations.openWorldHint, true);
          assert.deepEqual (by.shell.inputSchema.required, ['command']);
          const shell = ajv.compile (by.shell.inputSchema);
          assert.ok (shell ({ command: 'ls' }));
          assert.ok (!shell ({ command: 'ls', cwdd: '/x' }));
          assert.ok (!shell ({}));
        }
      finally
        {
          await client.close ();
        }
    });

    test ('each tool reaches brokerd and comes back with its labels in _meta', async () => {
      const client = await stdioClient (echoSock);
      try
        {
          const calls = {
            read_file: { path: `${data}/hello.txt` },
            write_file: { path: `${data}/new.txt`, content: 'x' },
            shell: { command: 'ls', cwd: data },
            http_fetch: { url: 'https://example.com/' },
          };
          let session;
          for (const [name, args] of Object.entries (calls))
            {
              const r = await client.callTool ({ name, arguments: args });
              assert.equal (r.isError, false, `${name}: ${text (r)}`);
              const echo = JSON.parse (text (r));
              assert.equal (echo.tool, name);
              assert.deepEqual (echo.arguments, args);
              // A session of this server's own (boxmaker-mcp(1)), the same for each call.
              assert.match (echo.session, /^mcp-[0-9]+-[0-9a-f]{16}$/);
              session ??= echo.session;
              assert.equal (echo.session, session);
              const untrusted = name === 'http_fetch';
              assert.equal (r._meta['boxmaker/outcome'], 'result');
              assert.equal (r._meta['boxmaker/class'], untrusted ? 'public' : 'internal');
              assert.equal (r._meta['boxmaker/untrusted'], untrusted);
              assert.equal (r._meta['boxmaker/truncated'], false);
              assert.equal (r.content[0]._meta['boxmaker/untrusted'], untrusted);
            }
        }
      finally
        {
          await client.close ();
        }
    });

    test ('an optional field sent as null is absent; a required one is still required',
          async () => {
      const client = await stdioClient (echoSock);
      try
        {
          const r = await client.callTool ({ name: 'shell',
                                             arguments: { command: 'ls', cwd: null } });
          assert.equal (r.isError, false, text (r));
          // Absent, so brokerd gives the grant's first folder (null would be denied).
          assert.deepEqual (JSON.parse (text (r)).arguments, { command: 'ls', cwd: data });
          const bad = await client.callTool ({ name: 'read_file', arguments: { path: null } });
          assert.equal (bad.isError, true);
          assert.equal (bad._meta['boxmaker/outcome'], 'denied');
          assert.match (text (bad), /read_file: "path" must be a string/);
        }
      finally
        {
          await client.close ();
        }
    });

    test ('denials, bad arguments and an unavailable broker are isError results', async () => {
      const client = await stdioClient (echoSock);
      try
        {
          const outside = await client.callTool ({ name: 'read_file',
                                                   arguments: { path: '/etc/passwd' } });
          assert.equal (outside.isError, true);
          assert.equal (outside._meta['boxmaker/outcome'], 'denied');
          assert.match (text (outside), /^denied: /);
          const unknown = await client.callTool ({ name: 'shell',
                                                   arguments: { command: 'ls', cwdd: '/' } });
          assert.equal (unknown.isError, true);
          assert.match (text (unknown), /shell: unknown field "cwdd"/);
        }
      finally
        {
          await client.close ();
        }
      const gone = await stdioClient (`${work}/nobody.sock`);
      try
        {
          const r = await gone.callTool ({ name: 'read_file', arguments: { path: '/x' } });
          assert.equal (r.isError, true);
          assert.equal (r._meta['boxmaker/outcome'], 'unavailable');
          // The reason and where to look, not only that it failed.
          assert.match (text (r), /^the tool broker is unavailable: cannot connect to .*nobody\.sock: connect: No such file or directory; see docs\/runbook\.md#broker-unavailable$/);
        }
      finally
        {
          await gone.close ();
        }
    });

    test ('a tool\'s own refusal is an isError result, told apart from content', async () => {
      const client = await stdioClient (`${work}/refusing.sock`);
      try
        {
          const r = await client.callTool ({ name: 'read_file',
                                             arguments: { path: `${data}/missing` } });
          assert.equal (r.isError, true);
          assert.equal (r._meta['boxmaker/outcome'], 'refused');
          assert.equal (r._meta['boxmaker/class'], 'internal');
          assert.equal (text (r), 'read_file: /srv/x: no such file or directory');
        }
      finally
        {
          await client.close ();
        }
    });

    test ('a 1.0 request gets the 1.0 result, refusal or not; one that asks gets "refused"',
          async () => {
      const ask = (refusals) => new Promise ((resolve, reject) => {
        const msg = { type: 'tool_request', call: 'c-1', session: 's', tool: 'read_file',
                      arguments: { path: `${data}/missing` } };
        if (refusals)
          msg.refusals = true;
        const c = net.createConnection (`${work}/refusing.sock`);
        let buf = Buffer.alloc (0);
        c.on ('data', (d) => { buf = Buffer.concat ([buf, d]); });
        c.on ('end', () => resolve (JSON.parse (buf.subarray (4, 4 + buf.readUInt32BE (0)))));
        c.on ('error', reject);
        c.write (frame ({ v: 1, id: 'c-1', final: true, msg }));
      });
      const old = await ask (false);
      assert.deepEqual (Object.keys (old.msg).sort (),
                        ['class', 'content', 'truncated', 'type', 'untrusted']);
      assert.equal (old.msg.content, 'read_file: /srv/x: no such file or directory');
      const asked = await ask (true);
      assert.equal (asked.msg.type, 'result');
      assert.equal (asked.msg.refused, true);
    });

    test ('an unknown tool and an unknown method are JSON-RPC errors', async () => {
      const client = await stdioClient (echoSock);
      try
        {
          await assert.rejects (client.callTool ({ name: 'rm_rf', arguments: {} }),
                                (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams
                                       && /Unknown tool: rm_rf/.test (e.message));
          await assert.rejects (client.request ({ method: 'resources/list' }, (x) => x),
                                (e) => e instanceof McpError
                                       && e.code === ErrorCode.MethodNotFound);
          await client.ping ();
        }
      finally
        {
          await client.close ();
        }
    });

    test ('calls run concurrently, each on its own brokerd connection', async () => {
      const client = await stdioClient (slowSock);
      try
        {
          const started = Date.now ();
          const results = await Promise.all (Array.from ({ length: 6 }, (_, i) =>
            client.callTool ({ name: 'read_file', arguments: { path: `${data}/f${i}` } })));
          const elapsed = Date.now () - started;
          // Six 400 ms calls one after the other would take 2.4 s.
          assert.ok (elapsed < 1600, `6 calls took ${elapsed} ms`);
          const seen = results.map ((r) => JSON.parse (text (r)));
          assert.deepEqual (seen.map ((e) => e.arguments.path).sort (),
                            Array.from ({ length: 6 }, (_, i) => `${data}/f${i}`).sort ());
          assert.ok (Math.max (...seen.map ((e) => e.max_in_flight)) >= 2);
        }
      finally
        {
          await client.close ();
        }
    });

    test ('past --max-calls a call is an isError result saying so', async () => {
      const client = await stdioClient (slowSock, ['--max-calls', '1']);
      try
        {
          const [a, b] = await Promise.all ([
            client.callTool ({ name: 'read_file', arguments: { path: `${data}/a` } }),
            client.callTool ({ name: 'read_file', arguments: { path: `${data}/b` } })]);
          assert.equal (a.isError, false);
          assert.equal (b.isError, true);
          assert.equal (text (b), 'failed: too many tool calls in flight (at most 1); wait for '
                                  + 'one to end');
        }
      finally
        {
          await client.close ();
        }
    });

    test ('cancelling a call closes its brokerd connection at once', async () => {
      const client = await stdioClient (scriptedSock);
      try
        {
          const ac = new AbortController ();
          const call = client.callTool ({ name: 'read_file', arguments: { path: '/hang' } },
                                        undefined, { signal: ac.signal });
          for (let i = 0; i < 100 && scripted.connectedAt === null; i++)
            await new Promise ((r) => setTimeout (r, 20));
          assert.ok (scripted.connectedAt !== null, 'the call reached the broker');
          const abortedAt = Date.now ();
          ac.abort ('the user changed their mind');
          await assert.rejects (call);
          for (let i = 0; i < 100 && scripted.closedAt === null; i++)
            await new Promise ((r) => setTimeout (r, 20));
          assert.ok (scripted.closedAt !== null, 'the brokerd connection was closed');
          assert.ok (scripted.closedAt - abortedAt < 1000);
          await client.ping (); // the session goes on
        }
      finally
        {
          await client.close ();
        }
    });

    test ('a pending approval becomes progress notifications until the result', async () => {
      const client = await stdioClient (scriptedSock, ['--progress-ms', '100']);
      try
        {
          const progress = [];
          const r = await client.callTool ({ name: 'read_file', arguments: { path: '/pending' } },
                                           undefined, { onprogress: (p) => progress.push (p) });
          // One at once, then one every 100 ms until the answer 300 ms later.
          assert.ok (progress.length >= 2 && progress.length <= 4, `${progress.length}`);
          assert.deepEqual (progress.map ((p) => p.progress),
                            progress.map ((_, i) => i + 1));
          for (const p of progress)
            assert.match (p.message, /^waiting for approval: read \/pending \(expires /);
          assert.equal (text (r), 'approved');
          assert.equal (r._meta['boxmaker/untrusted'], true);
        }
      finally
        {
          await client.close ();
        }
    });

    // brokerd's own approvals: the owner answers on the admin socket with boxmaker approve.
    // The owner's list as `boxmaker approvals --json` prints it.
    const approvalsJson = () => new Promise ((resolve) => {
      const c = spawn (boxmaker, ['approvals', '--json', '--admin-socket', `${work}/admin.sock`]);
      let o = '';
      c.stdout.on ('data', (d) => { o += d; });
      c.on ('exit', () => resolve (o));
    });
    const waitingIds = async () =>
      [...(await approvalsJson ()).matchAll (/"approval":"([0-9a-f]{32})"/g)].map ((m) => m[1]);
    // A bound that only ends a hang: a loaded machine may take seconds.
    const waitFor = async (cond) => {
      for (let i = 0; i < 2400; i++)
        {
          const v = await cond ();
          if (v)
            return v;
          await new Promise ((r) => setTimeout (r, 25));
        }
      return null;
    };

    test ('brokerd\'s pending approval: progress until the owner approves, then the result',
          async () => {
      const client = await stdioClient (`${work}/approving.sock`, ['--progress-ms', '100']);
      try
        {
          const progress = [];
          const call = client.callTool ({ name: 'read_file',
                                          arguments: { path: `${data}/hello.txt` } },
                                        undefined, { onprogress: (p) => progress.push (p) });
          const ids = await waitFor (async () => { const v = await waitingIds (); return v.length ? v : null; });
          assert.ok (ids && ids.length === 1, 'one call waits for approval');
          await waitFor (() => progress.length >= 2);
          assert.ok (progress.length >= 2, `${progress.length} progress notifications`);
          assert.match (progress[0].message, /^waiting for approval: .*read_file/);
          const approve = spawn (boxmaker, ['approve', ids[0], '--admin-socket',
                                            `${work}/admin.sock`]);
          const [code] = await once (approve, 'exit');
          assert.equal (code, 0);
          const r = await call;
          assert.equal (r.isError, false, text (r));
          assert.equal (JSON.parse (text (r)).arguments.path, `${data}/hello.txt`);
        }
      finally
        {
          await client.close ();
        }
    });

    // What a client that gives up sees: the SDK's request timeout cancels the call, brokerd
    // keeps its approval (listed as client_left), and the same call asked again in the same
    // session waits on that approval, or runs at once once the owner approved.
    const listedLeft = async (id) => {
      const list = JSON.parse (await approvalsJson ());
      return (list.pending || list).some ((p) => p.approval === id && p.client_left === true);
    };
    const approveId = async (id) => {
      const approve = spawn (boxmaker, ['approve', id, '--admin-socket', `${work}/admin.sock`]);
      const [code] = await once (approve, 'exit');
      return code;
    };

    test ('a call cancelled while it waits keeps its approval for the same call asked again',
          async () => {
      const client = await stdioClient (`${work}/approving.sock`);
      try
        {
          const args = { name: 'read_file', arguments: { path: `${data}/hello.txt` } };
          const ac = new AbortController ();
          const call = client.callTool (args, undefined, { signal: ac.signal });
          const ids = await waitFor (async () => { const v = await waitingIds (); return v.length ? v : null; });
          assert.ok (ids && ids.length === 1, 'one call waits for approval');
          ac.abort ('not needed any more');
          await assert.rejects (call);
          assert.ok (await waitFor (() => listedLeft (ids[0])),
                     'the approval is still listed, its client gone');
          // Asked again: the same approval, still waiting; approved, the result.
          const again = client.callTool (args);
          assert.ok (await waitFor (async () => !(await listedLeft (ids[0]))
                                                && (await waitingIds ()).includes (ids[0])),
                     'the call asked again waits on the same approval');
          assert.deepEqual (await waitingIds (), [ids[0]]);
          assert.equal (await approveId (ids[0]), 0);
          const r = await again;
          assert.equal (r.isError, false, text (r));
          assert.equal (JSON.parse (text (r)).arguments.path, `${data}/hello.txt`);
        }
      finally
        {
          await client.close ();
        }
    });

    test ('a call past the SDK\'s request timeout runs when asked again after the approval',
          async () => {
      const client = await stdioClient (`${work}/approving.sock`);
      try
        {
          const args = { name: 'read_file', arguments: { path: `${data}/hello.txt` } };
          await assert.rejects (client.callTool (args, undefined, { timeout: 1000 }),
                                /timed out|Timeout/i);
          const ids = await waitFor (async () => { const v = await waitingIds (); return v.length ? v : null; });
          assert.ok (ids && ids.length === 1, 'its approval is listed');
          assert.ok (await waitFor (() => listedLeft (ids[0])), 'listed with its client gone');
          assert.equal (await approveId (ids[0]), 0);
          assert.deepEqual (await waitingIds (), []);
          const r = await client.callTool (args);
          assert.equal (r.isError, false, text (r));
          assert.equal (JSON.parse (text (r)).arguments.path, `${data}/hello.txt`);
        }
      finally
        {
          await client.close ();
        }
    });

    // Raw lines on stdio: what the SDK would never send.
    async function raw (lines, { socket = echoSock, close = true } = {}) {
      const child = spawn (boxmaker, ['mcp', '--socket', socket], { stdio: ['pipe', 'pipe',
                                                                             'pipe'] });
      let out = '';
      child.stdout.on ('data', (d) => { out += d; });
      for (const l of lines)
        child.stdin.write (l);
      const want = lines.filter ((l) => !l.includes ('"notifications/')).length;
      for (let i = 0; i < 250 && out.split ('\n').length - 1 < want; i++)
        await new Promise ((r) => setTimeout (r, 20));
      const started = Date.now ();
      if (close)
        child.stdin.end ();
      const [code] = await once (child, 'exit');
      return { replies: out.trim ().split ('\n').map ((l) => JSON.parse (l)), code,
               exitMs: Date.now () - started };
    }

    test ('version negotiation: a known revision is echoed, any other gets the latest',
          async () => {
      const init = (id, v) => JSON.stringify ({ jsonrpc: '2.0', id, method: 'initialize',
                                                params: { protocolVersion: v, capabilities: {},
                                                          clientInfo: { name: 'r',
                                                                        version: '1' } } })
                              + '\n';
      const { replies } = await raw ([init (1, '2025-06-18'), init (2, '2025-11-25'),
                                      init (3, '1999-01-01'), init (4, '2025-03-26'),
                                      init (5, '2024-11-05')]);
      assert.deepEqual (replies.map ((r) => r.result.protocolVersion),
                        ['2025-06-18', '2025-11-25', LATEST_PROTOCOL_VERSION, '2025-03-26',
                         '2024-11-05']);
      assert.equal (LATEST_PROTOCOL_VERSION, '2025-11-25');
    });

    test ('malformed messages get the errors the spec names, and the session goes on',
          async () => {
      const big = '{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"'
                  + 'a'.repeat (9 * 1024 * 1024) + '"}}\n';
      const { replies, code, exitMs } = await raw ([
        'not json\n', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', '{"id":2,"method":"ping"}\n',
        '{"jsonrpc":"2.0","id":null,"method":"ping"}\n',
        '{"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}\n',
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}\n', big,
        '{"jsonrpc":"2.0","id":6,"id":6,"method":"ping"}\n',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        '{"jsonrpc":"2.0","id":5,"method":"ping"}\n',
      ]);
      assert.deepEqual (replies.map ((r) => r.error ? r.error.code : 'ok'),
                        [-32700, -32600, -32600, -32600, -32602, -32602, -32600, -32700, 'ok']);
      assert.equal (replies[8].id, 5);
      assert.equal (code, 0);
      assert.ok (exitMs < 2000, `exit took ${exitMs} ms after standard input closed`);
    });

    test ('closing standard input mid-call cancels the call and ends the server', async () => {
      scripted.closedAt = null;
      scripted.connectedAt = null;
      const call = JSON.stringify ({ jsonrpc: '2.0', id: 1, method: 'tools/call',
                                     params: { name: 'read_file', arguments: { path: '/hang' } } })
                   + '\n';
      const child = spawn (boxmaker, ['mcp', '--socket', scriptedSock]);
      child.stdin.write (call);
      for (let i = 0; i < 100 && scripted.connectedAt === null; i++)
        await new Promise ((r) => setTimeout (r, 20));
      child.stdin.end ();
      const [code] = await once (child, 'exit');
      assert.equal (code, 0);
      for (let i = 0; i < 50 && scripted.closedAt === null; i++)
        await new Promise ((r) => setTimeout (r, 20));
      assert.ok (scripted.closedAt !== null);
    });

    // Streamable HTTP.  Every TCP listener needs a token: these servers share one.
    const tokenPath = `${work}/sdk-token`;
    fs.writeFileSync (tokenPath, 'sdk-token-7\n', { mode: 0o600 });
    const auth = { authorization: 'Bearer sdk-token-7' };
    const authed = { requestInit: { headers: auth } };
    async function httpServer (args, socket = echoSock) {
      const child = spawn (boxmaker, ['mcp', '--socket', socket, ...args],
                           { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on ('data', (d) => { err += d; });
      for (let i = 0; i < 200 && !err.includes ('listening') && child.exitCode === null; i++)
        await new Promise ((r) => setTimeout (r, 20));
      return { child, stderr: () => err };
    }
    const port = 20000 + (process.pid % 20000);

    test ('over streamable HTTP: tools/list and tools/call with the SDK', async () => {
      const srv = await httpServer (['--http', `127.0.0.1:${port}`, '--token-file', tokenPath]);
      try
        {
          const client = new Client ({ name: 'boxmaker-sdk-test', version: '1.0.0' });
          await client.connect (new StreamableHTTPClientTransport (
              new URL (`http://127.0.0.1:${port}/mcp`), authed));
          // No stream of the server's own over HTTP: it cannot say that its tools changed.
          assert.deepEqual (client.getServerCapabilities ().tools, { listChanged: false });
          const { tools } = await client.listTools ();
          assert.equal (tools.length, 4);
          const r = await client.callTool ({ name: 'read_file',
                                             arguments: { path: `${data}/hello.txt` } });
          assert.equal (JSON.parse (text (r)).tool, 'read_file');
          await assert.rejects (client.callTool ({ name: 'nope', arguments: {} }),
                                (e) => e.code === ErrorCode.InvalidParams);
          await client.close ();

          const post = (headers, body) => fetch (`http://127.0.0.1:${port}/mcp`, {
            method: 'POST', body,
            headers: { 'content-type': 'application/json',
                       accept: 'application/json, text/event-stream', ...auth, ...headers } });
          const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
          assert.equal ((await post ({ origin: 'https://evil.example' }, ping)).status, 403);
          assert.equal ((await post ({ origin: `http://localhost:${port}` }, ping)).status, 200);
          assert.equal ((await post ({ 'mcp-protocol-version': '1999-01-01' }, ping)).status, 400);
          assert.equal ((await post ({}, '{"jsonrpc":"2.0","method":"notifications/initialized"}'))
                        .status, 202);
          assert.equal ((await post ({}, 'x'.repeat (9 * 1024 * 1024))).status, 413);
          const garbage = await post ({}, 'not json');
          assert.equal (garbage.status, 400);
          assert.equal ((await garbage.json ()).error.code, -32700);
          const get = await fetch (`http://127.0.0.1:${port}/mcp`,
                                   { headers: { accept: 'text/event-stream', ...auth } });
          assert.equal (get.status, 405);
          assert.equal ((await fetch (`http://127.0.0.1:${port}/other`, { method: 'POST',
                                                                          body: ping })).status,
                        404);
        }
      finally
        {
          srv.child.kill ('SIGTERM');
          const [code] = await once (srv.child, 'exit');
          assert.equal (code, 0);
        }
    });

    test ('over HTTP, cancelling a call closes its brokerd connection', async () => {
      scripted.closedAt = null;
      scripted.connectedAt = null;
      const srv = await httpServer (['--http', `127.0.0.1:${port + 4}`, '--token-file', tokenPath],
                                    scriptedSock);
      try
        {
          const client = new Client ({ name: 'boxmaker-sdk-test', version: '1.0.0' });
          await client.connect (new StreamableHTTPClientTransport (
              new URL (`http://127.0.0.1:${port + 4}/mcp`), authed));
          const ac = new AbortController ();
          const call = client.callTool ({ name: 'read_file', arguments: { path: '/hang' } },
                                        undefined, { signal: ac.signal });
          for (let i = 0; i < 100 && scripted.connectedAt === null; i++)
            await new Promise ((r) => setTimeout (r, 20));
          assert.ok (scripted.connectedAt !== null, 'the call reached the broker');
          ac.abort ('changed my mind');
          await assert.rejects (call);
          for (let i = 0; i < 100 && scripted.closedAt === null; i++)
            await new Promise ((r) => setTimeout (r, 20));
          assert.ok (scripted.closedAt !== null, 'the brokerd connection was closed');
          await client.close ();
        }
      finally
        {
          srv.child.kill ('SIGTERM');
          await once (srv.child, 'exit');
        }
    });

    test ('over HTTP, a running call streams its progress and then its result', async () => {
      const srv = await httpServer (['--http', `127.0.0.1:${port + 5}`, '--token-file', tokenPath,
                                     '--progress-ms', '100'], scriptedSock);
      try
        {
          const client = new Client ({ name: 'boxmaker-sdk-test', version: '1.0.0' });
          await client.connect (new StreamableHTTPClientTransport (
              new URL (`http://127.0.0.1:${port + 5}/mcp`), authed));
          const progress = [];
          const r = await client.callTool ({ name: 'read_file', arguments: { path: '/pending' } },
                                           undefined, { onprogress: (p) => progress.push (p) });
          assert.ok (progress.length >= 2, `${progress.length} progress notifications`);
          assert.match (progress[0].message, /^waiting for approval: read \/pending/);
          assert.equal (text (r), 'approved');
          await client.close ();
          // Without text/event-stream in Accept, the same call is one JSON response.
          const plain = await fetch (`http://127.0.0.1:${port + 5}/mcp`, {
            method: 'POST', headers: { 'content-type': 'application/json',
                                       accept: 'application/json', ...auth },
            body: JSON.stringify ({ jsonrpc: '2.0', id: 3, method: 'tools/call',
                                    params: { name: 'read_file',
                                              arguments: { path: '/pending' } } }) });
          assert.equal (plain.headers.get ('content-type'), 'application/json');
          assert.equal ((await plain.json ()).result.content[0].text, 'approved');
        }
      finally
        {
          srv.child.kill ('SIGTERM');
          await once (srv.child, 'exit');
        }
    });

    test ('over HTTP a token file asks for a bearer token', async () => {
      fs.writeFileSync (`${work}/token`, 's3cret-token\n', { mode: 0o600 });
      const srv = await httpServer (['--http', `127.0.0.1:${port + 1}`, '--token-file',
                                     `${work}/token`]);
      try
        {
          const url = new URL (`http://127.0.0.1:${port + 1}/mcp`);
          const none = new Client ({ name: 't', version: '1' });
          await assert.rejects (none.connect (new StreamableHTTPClientTransport (url)));
          const client = new Client ({ name: 't', version: '1' });
          await client.connect (new StreamableHTTPClientTransport (url, {
            requestInit: { headers: { authorization: 'Bearer s3cret-token' } } }));
          assert.equal ((await client.listTools ()).tools.length, 4);
          await client.close ();
          const wrong = await fetch (url, { method: 'POST', body: '{}',
                                            headers: { authorization: 'Bearer s3cret-tokeN' } });
          assert.equal (wrong.status, 401);
        }
      finally
        {
          srv.child.kill ('SIGTERM');
          await once (srv.child, 'exit');
        }
    });

    test ('over HTTP the SDK\'s OAuth discovery finds the resource and no authorization server', async () => {
      fs.writeFileSync (`${work}/meta-token`, 'meta-token-9\n', { mode: 0o600 });
      const p = port + 6;
      const srv = await httpServer (['--http', `127.0.0.1:${p}`, '--token-file',
                                     `${work}/meta-token`]);
      try
        {
          const url = new URL (`http://127.0.0.1:${p}/mcp`);
          const none = await fetch (url, { method: 'POST', body: '{}',
                                           headers: { 'content-type': 'application/json' } });
          assert.equal (none.status, 401);
          const { resourceMetadataUrl, error } = extractWWWAuthenticateParams (none);
          assert.equal (String (resourceMetadataUrl),
                        `http://127.0.0.1:${p}/.well-known/oauth-protected-resource`);
          assert.equal (error, undefined, 'a request without a token is told no error');
          // Through the 401's URL, and through RFC 9728's own for /mcp when there is none.
          for (const opts of [{ resourceMetadataUrl }, {}])
            {
              const meta = await discoverOAuthProtectedResourceMetadata (url, opts);
              assert.equal (meta.resource, url.href);
              assert.deepEqual (meta.authorization_servers, []);
              assert.deepEqual (meta.bearer_methods_supported, ['header']);
              assert.match (meta.resource_name, /static bearer token/);
            }
          // No authorization server metadata anywhere the SDK looks: nothing to register with.
          assert.equal (await discoverAuthorizationServerMetadata (new URL ('/', url)), undefined);
          // The SDK's whole flow, given an OAuth provider: its last resort, registering at
          // /register, is refused with the reason, which is what the client reports.
          const asked = [];
          const provider = {
            redirectUrl: 'http://localhost:9/callback',
            clientMetadata: { redirect_uris: ['http://localhost:9/callback'], client_name: 't' },
            clientInformation: () => undefined, saveClientInformation: () => {},
            tokens: () => undefined, saveTokens: () => {}, redirectToAuthorization: () => {},
            saveCodeVerifier: () => {}, codeVerifier: () => 'v' };
          await assert.rejects (
            oauthFlow (provider, { serverUrl: url, resourceMetadataUrl,
                              fetchFn: (u, init) => {
                                asked.push (`${init?.method ?? 'GET'} ${new URL (u).pathname}`);
                                return fetch (u, init);
                              } }),
            /this server takes one static bearer token .*there is no authorization server/);
          assert.equal (asked.at (-1), 'POST /register', asked.join (', '));
          const wrong = await fetch (url, { method: 'POST', body: '{}',
                                            headers: { authorization: 'Bearer meta-token-X' } });
          assert.equal (wrong.status, 401);
          assert.equal (extractWWWAuthenticateParams (wrong).error, 'invalid_token');
        }
      finally
        {
          srv.child.kill ('SIGTERM');
          await once (srv.child, 'exit');
        }
    });

    test ('a TCP address without a token is refused at start, loopback or not', async () => {
      for (const host of ['0.0.0.0', '127.0.0.1'])
        {
          const child = spawn (boxmaker, ['mcp', '--socket', echoSock, '--http',
                                          `${host}:${port + 2}`],
                               { stdio: ['ignore', 'ignore', 'pipe'] });
          let err = '';
          child.stderr.on ('data', (d) => { err += d; });
          const [code] = await once (child, 'exit');
          assert.equal (code, 2);
          assert.match (err, /--http on a TCP address needs --token-file/);
        }
    });

    test ('over HTTP on a Unix socket', async () => {
      const path = `${work}/mcp-http.sock`;
      const srv = await httpServer (['--http', path]);
      try
        {
          const body = '{"jsonrpc":"2.0","id":7,"method":"tools/list"}';
          const reply = await new Promise ((resolve, reject) => {
            const c = net.createConnection (path);
            let got = '';
            c.on ('data', (d) => { got += d; });
            c.on ('end', () => resolve (got));
            c.on ('error', reject);
            c.end (`POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n`
                   + `Connection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
          });
          assert.match (reply, /^HTTP\/1\.1 200/);
          assert.equal (JSON.parse (reply.slice (reply.indexOf ('\r\n\r\n') + 4)).result.tools
                        .length, 4);
        }
      finally
        {
          srv.child.kill ('SIGTERM');
          await once (srv.child, 'exit');
        }
    });
  
    // docs/mcp.md: every agent snippet starts a server the SDK can drive.
    const docs = fs.readFileSync (`${process.env.BX_DOCS}/mcp.md`, 'utf8');
    const snippet = (name) => {
      const m = docs.match (new RegExp (`<!-- snippet: ${name} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\`\`\`\n`));
      assert.ok (m, `docs/mcp.md has the ${name} snippet`);
      return m[1];
    };
    const fromToml = (text) => {
      assert.match (text, /^\[mcp_servers\.boxmaker\]$/m);
      return { command: JSON.parse (text.match (/^command = (".*")$/m)[1]),
               args: JSON.parse (text.match (/^args = (\[.*\])$/m)[1]) };
    };
    const stdioSnippets = {
      claude: () => {
        const words = snippet ('claude').trim ().split (/ +/);
        assert.deepEqual (words.slice (0, 6), ['claude', 'mcp', 'add', '--transport', 'stdio',
                                               'boxmaker']);
        const rest = words.slice (words.indexOf ('--') + 1);
        return { command: rest[0], args: rest.slice (1) };
      },
      cursor: () => JSON.parse (snippet ('cursor')).mcpServers.boxmaker,
      vscode: () => {
        const s = JSON.parse (snippet ('vscode')).servers.boxmaker;
        assert.equal (s.type, 'stdio');
        return s;
      },
      codex: () => fromToml (snippet ('codex')),
    };
    for (const [name, get] of Object.entries (stdioSnippets))
      test (`docs/mcp.md: the ${name} snippet starts a working server`, async () => {
        const { command, args } = get ();
        assert.equal (command, 'boxmaker');
        const socketAt = args.indexOf ('/run/boxmaker/broker.sock');
        assert.ok (socketAt > 0);
        const real = [...args];
        real[socketAt] = echoSock;
        const client = new Client ({ name, version: '1' });
        await client.connect (new StdioClientTransport ({ command: boxmaker, args: real }));
        try
          {
            assert.equal ((await client.listTools ()).tools.length, 4);
          }
        finally
          {
            await client.close ();
          }
      });

    test ('docs/mcp.md: the claude-http snippet reaches a server with a token', async () => {
      const words = snippet ('claude-http').trim ();
      const m = words.match (/^claude mcp add --transport http boxmaker (http:\/\/127\.0\.0\.1:(\d+)\/mcp) --header "Authorization: Bearer \$\(cat ([^)]+)\)"$/);
      assert.ok (m, words);
      fs.writeFileSync (`${work}/doc-token`, 'doc-token-1\n', { mode: 0o600 });
      const p = port + 3;
      const srv = await httpServer (['--http', `127.0.0.1:${p}`, '--token-file', `${work}/doc-token`]);
      try
        {
          const client = new Client ({ name: 'claude-http', version: '1' });
          await client.connect (new StreamableHTTPClientTransport (
              new URL (m[1].replace (m[2], String (p))),
              { requestInit: { headers: { Authorization: 'Bearer doc-token-1' } } }));
          assert.equal ((await client.listTools ()).tools.length, 4);
          await client.close ();
        }
      finally
        {
          srv.child.kill ('SIGTERM');
          await once (srv.child, 'exit');
        }
    });
  }
