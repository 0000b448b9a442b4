// SPDX-License-Identifier: Apache-2.0
// Every published MCP revision against `boxmaker mcp`: the official SDK releases that speak
// the older ones (1.11.0: 2025-03-26, 1.9.0: 2024-11-05, installed as the aliases sdk-1-11
// and sdk-1-9) connect, list the tools and call one; raw JSON-RPC lines check each
// revision's negotiation, what each revision's answers carry, and batches.  Run by
// run-sdk.sh, which starts the brokerd at BX_WORK/echo.sock (fake.so's echo).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { once } from 'node:events';
import { Client as Client111 } from 'sdk-1-11/client/index.js';
import { StdioClientTransport as Stdio111 } from 'sdk-1-11/client/stdio.js';
import { StreamableHTTPClientTransport as Http111 } from 'sdk-1-11/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION as LATEST_111 } from 'sdk-1-11/types.js';
import { Client as Client19 } from 'sdk-1-9/client/index.js';
import { StdioClientTransport as Stdio19 } from 'sdk-1-9/client/stdio.js';
import { LATEST_PROTOCOL_VERSION as LATEST_19 } from 'sdk-1-9/types.js';

const boxmaker = process.env.BX_BOXMAKER;
const work = process.env.BX_WORK;
const data = `${work}/data`;
const echoSock = `${work}/echo.sock`;
const text = (r) => r.content.map ((c) => c.text).join ('');

// Newest first, as the server's table; HTTP carries the first three.
const ALL = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const OVER_HTTP = ['2025-11-25', '2025-06-18', '2025-03-26'];
// What each revision defines of what the server sends.
const hasTitles = (v) => v >= '2025-06-18';
const hasAnnotations = (v) => v >= '2025-03-26';
const hasProgressMessage = (v) => v >= '2025-03-26';

// Records every message the client's transport receives, whatever the SDK's schemas keep.
function spy (transport) {
  const seen = [];
  let inner;
  Object.defineProperty (transport, 'onmessage', {
    configurable: true,
    get: () => inner,
    set: (h) => { inner = h && ((m) => { seen.push (m); h (m); }); },
  });
  return seen;
}

const negotiated = (seen) => seen.find ((m) => m.result?.protocolVersion).result.protocolVersion;

function checkTools (tools, v) {
  assert.deepEqual (tools.map ((t) => t.name), ['read_file', 'write_file', 'shell',
                                                 'http_fetch']);
  for (const t of tools)
    {
      assert.equal ('title' in t, hasTitles (v), `${v}: ${t.name}.title`);
      assert.equal ('annotations' in t, hasAnnotations (v), `${v}: ${t.name}.annotations`);
    }
}

// The old SDK's client: connects, lists the tools and calls read_file against brokerd.
async function roundTrip (client, transport, version) {
  const seen = spy (transport);
  await client.connect (transport);
  try
    {
      assert.equal (negotiated (seen), version);
      assert.equal (client.getServerVersion ().name, 'boxmaker');
      assert.equal ('title' in client.getServerVersion (), hasTitles (version));
      const { tools } = await client.listTools ();
      assert.equal (tools.length, 4);
      checkTools (seen.find ((m) => m.result?.tools).result.tools, version);
      const r = await client.callTool ({ name: 'read_file',
                                         arguments: { path: `${data}/hello.txt` } });
      assert.equal (r.isError, false, text (r));
      assert.equal (JSON.parse (text (r)).tool, 'read_file');
      assert.equal (r._meta['boxmaker/outcome'], 'result');
      const raw = seen.find ((m) => m.result?.content).result;
      assert.equal ('_meta' in raw.content[0], false, 'no _meta on a content block before 2025-06-18');
    }
  finally
    {
      await client.close ();
    }
}

test ('SDK 1.11.0 negotiates 2025-03-26 over stdio and calls a tool', async () => {
  assert.equal (LATEST_111, '2025-03-26');
  const transport = new Stdio111 ({ command: boxmaker, args: ['mcp', '--socket', echoSock],
                                    stderr: 'pipe' });
  await roundTrip (new Client111 ({ name: 'sdk-1.11', version: '1' }), transport, '2025-03-26');
});

test ('SDK 1.9.0 negotiates 2024-11-05 over stdio and calls a tool', async () => {
  assert.equal (LATEST_19, '2024-11-05');
  const transport = new Stdio19 ({ command: boxmaker, args: ['mcp', '--socket', echoSock],
                                   stderr: 'pipe' });
  await roundTrip (new Client19 ({ name: 'sdk-1.9', version: '1' }), transport, '2024-11-05');
});

test ('a call waiting for approval sends progress, with a message only from 2025-03-26 on',
      async () => {
  for (const v of ALL)
    {
      // run-sdk.sh's approving brokerd: every read_file waits for a person's approval.
      const s = session (`${work}/approving.sock`);
      await s.ask (init (1, v));
      s.tell (note);
      const progress = await s.ask ({ jsonrpc: '2.0', id: 2, method: 'tools/call',
                                      params: { name: 'read_file',
                                                arguments: { path: `${data}/hello.txt` },
                                                _meta: { progressToken: 'p' } } });
      assert.equal (progress.method, 'notifications/progress');
      assert.equal (progress.params.progressToken, 'p');
      assert.equal ('message' in progress.params, hasProgressMessage (v), v);
      // Closing standard input cancels the call, which leaves the owner's list.
      assert.equal (await s.close (), 0);
    }
});

// Streamable HTTP.  Ports apart from sdk.test.mjs's (20000 + pid % 20000, and a few above).
const port = 40000 + (process.pid % 20000);
const tokenPath = `${work}/versions-token`;
fs.writeFileSync (tokenPath, 'versions-token-3\n', { mode: 0o600 });
const auth = { authorization: 'Bearer versions-token-3' };

async function withHttpServer (fn, socket = echoSock) {
  const child = spawn (boxmaker, ['mcp', '--socket', socket, '--http', `127.0.0.1:${port}`,
                                  '--token-file', tokenPath],
                       { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on ('data', (d) => { err += d; });
  for (let i = 0; i < 200 && !err.includes ('listening') && child.exitCode === null; i++)
    await new Promise ((r) => setTimeout (r, 20));
  assert.ok (err.includes ('listening'), err);
  try
    {
      await fn (new URL (`http://127.0.0.1:${port}/mcp`));
    }
  finally
    {
      child.kill ('SIGTERM');
      const [code] = await once (child, 'exit');
      assert.equal (code, 0, err);
    }
}

const post = (url, body, headers = {}) => fetch (url, {
  method: 'POST', body: typeof body === 'string' ? body : JSON.stringify (body),
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
             ...auth, ...headers } });
const init = (id, v) => ({ jsonrpc: '2.0', id, method: 'initialize',
                           params: { protocolVersion: v, capabilities: {},
                                     clientInfo: { name: 'raw', version: '1' } } });
const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });
const list = (id) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
const note = { jsonrpc: '2.0', method: 'notifications/initialized' };

test ('SDK 1.11.0 negotiates 2025-03-26 over streamable HTTP and calls a tool', async () => {
  await withHttpServer (async (url) => {
    const transport = new Http111 (url, { requestInit: { headers: auth } });
    await roundTrip (new Client111 ({ name: 'sdk-1.11', version: '1' }), transport,
                     '2025-03-26');
  });
});

test ('over HTTP: each revision with streamable HTTP is negotiated, 2024-11-05 gets the latest',
      async () => {
  await withHttpServer (async (url) => {
    for (const v of [...OVER_HTTP, '2024-11-05', '1999-01-01'])
      {
        const r = await post (url, init (1, v));
        assert.equal (r.status, 200);
        const want = OVER_HTTP.includes (v) ? v : ALL[0];
        assert.equal ((await r.json ()).result.protocolVersion, want, `asked ${v}`);
      }
    // Each request is read under its header; without one, as 2025-03-26.
    for (const v of OVER_HTTP)
      checkTools ((await (await post (url, list (2), { 'mcp-protocol-version': v })).json ())
                  .result.tools, v);
    checkTools ((await (await post (url, list (2))).json ()).result.tools, '2025-03-26');
    for (const v of ['2024-11-05', '1999-01-01'])
      {
        const r = await post (url, ping (3), { 'mcp-protocol-version': v });
        assert.equal (r.status, 400);
        const e = await r.json ();
        assert.match (e.error.message, new RegExp (`MCP-Protocol-Version ${v} .*`
                                                   + '2025-11-25, 2025-06-18 and 2025-03-26'));
      }
  });
});

test ('over HTTP: a batch is answered under 2025-03-26 and refused under 2025-06-18',
      async () => {
  await withHttpServer (async (url) => {
    const r = await post (url, [ping (1), list (2), note]);
    assert.equal (r.status, 200);
    const replies = await r.json ();
    assert.deepEqual (replies.map ((m) => m.id).sort (), [1, 2]);
    assert.equal ((await post (url, [note, note])).status, 202);
    // A batch with a tools/call still running (this brokerd answers after 400 ms): an SSE
    // stream whose event is one array, once the call is done.
    const call = { jsonrpc: '2.0', id: 'c', method: 'tools/call',
                   params: { name: 'read_file', arguments: { path: `${data}/hello.txt` } } };
    const withCall = await post (url, [call, ping (4)]);
    assert.equal (withCall.status, 200);
    assert.equal (withCall.headers.get ('content-type'), 'text/event-stream');
    const events = (await withCall.text ()).split ('\n').filter ((l) => l.startsWith ('data: '));
    assert.equal (events.length, 1);
    const answer = JSON.parse (events[0].slice (6));
    assert.deepEqual (answer.map ((m) => m.id).sort (), [4, 'c']);
    assert.equal (JSON.parse (text (answer.find ((m) => m.id === 'c').result)).tool,
                  'read_file');
    const refused = await post (url, [ping (1)], { 'mcp-protocol-version': '2025-06-18' });
    assert.equal (refused.status, 400);
    assert.match ((await refused.json ()).error.message, /batches are not part of MCP 2025-06-18/);
  }, `${work}/slow.sock`);
});

// Raw lines on stdio: one session, each line sent and its answer (if any) awaited.
function session (socket = echoSock) {
  const child = spawn (boxmaker, ['mcp', '--socket', socket],
                       { stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  const lines = [];
  let wake = null;
  child.stdout.on ('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf ('\n')) >= 0)
      {
        lines.push (JSON.parse (buf.slice (0, i)));
        buf = buf.slice (i + 1);
      }
    wake?.();
  });
  const next = async () => {
    for (let i = 0; i < 500 && lines.length === 0; i++)
      await new Promise ((r) => { wake = r; setTimeout (r, 20); });
    assert.ok (lines.length > 0, 'an answer came');
    return lines.shift ();
  };
  return {
    ask: async (msg) => {
      child.stdin.write ((typeof msg === 'string' ? msg : JSON.stringify (msg)) + '\n');
      return next ();
    },
    tell: (msg) => child.stdin.write (JSON.stringify (msg) + '\n'),
    pending: () => lines.length,
    close: async () => {
      child.stdin.end ();
      const [code] = await once (child, 'exit');
      return code;
    },
  };
}

test ('over stdio: every revision is negotiated and the session keeps it', async () => {
  for (const v of [...ALL, '1999-01-01'])
    {
      const s = session ();
      const want = ALL.includes (v) ? v : ALL[0];
      const r = await s.ask (init (1, v));
      assert.equal (r.result.protocolVersion, want, `asked ${v}`);
      assert.equal ('title' in r.result.serverInfo, hasTitles (want));
      s.tell (note);
      checkTools ((await s.ask (list (2))).result.tools, want);
      assert.equal (await s.close (), 0);
    }
});

test ('over stdio: batches under 2025-03-26 and 2024-11-05, refused under later revisions',
      async () => {
  for (const v of ['2025-03-26', '2024-11-05'])
    {
      const s = session ();
      await s.ask (init (1, v));
      s.tell (note);
      const call = { jsonrpc: '2.0', id: 'c', method: 'tools/call',
                     params: { name: 'read_file', arguments: { path: `${data}/hello.txt` } } };
      // Requests and a notification: one array, a response for each request.
      const both = await s.ask ([ping (2), note, list (3), call]);
      assert.ok (Array.isArray (both));
      assert.deepEqual (both.map ((m) => m.id).sort (), [2, 3, 'c']);
      const called = both.find ((m) => m.id === 'c').result;
      assert.equal (JSON.parse (text (called)).tool, 'read_file');
      checkTools (both.find ((m) => m.id === 3).result.tools, v);
      // Only notifications: no answer at all; the next request's answer comes next.
      s.tell ([note, note]);
      assert.equal ((await s.ask (ping (4))).id, 4);
      // An empty array is one Invalid Request, not an array.
      const empty = await s.ask ('[]');
      assert.equal (empty.error.code, -32600);
      assert.equal (empty.id, null);
      // Members that are not messages each get their own Invalid Request.
      const junk = await s.ask ('[1, "x", [], {"jsonrpc":"2.0","id":5,"method":"ping"}]');
      assert.deepEqual (junk.map ((m) => m.error?.code ?? 'ok'),
                        [-32600, -32600, -32600, 'ok']);
      // initialize must not be in a batch; the session keeps its revision.
      const again = await s.ask ([init (6, '2025-11-25')]);
      assert.equal (again[0].error.code, -32600);
      checkTools ((await s.ask (list (7))).result.tools, v);
      // Too many members: one Invalid Request.
      const huge = await s.ask (Array.from ({ length: 1025 }, (_, i) => ping (100 + i)));
      assert.equal (huge.error.code, -32600);
      assert.match (huge.error.message, /at most 1024/);
      const most = await s.ask (Array.from ({ length: 1024 }, (_, i) => ping (100 + i)));
      assert.equal (most.length, 1024);
      assert.equal (s.pending (), 0);
      assert.equal (await s.close (), 0);
    }
  for (const v of ['2025-06-18', '2025-11-25'])
    {
      const s = session ();
      await s.ask (init (1, v));
      const r = await s.ask ([ping (2)]);
      assert.equal (r.error.code, -32600);
      assert.match (r.error.message, new RegExp (`batches are not part of MCP ${v}`));
      assert.equal ((await s.ask (ping (3))).id, 3);
      assert.equal (await s.close (), 0);
    }
});
