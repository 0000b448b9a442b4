// SPDX-License-Identifier: Apache-2.0
// http_token.sh's cases: `boxmaker mcp --http` against a hostile local user.  Node.js
// built-ins only.  BX_BOXMAKER is the boxmaker program, BX_WORK a folder holding broker.sock
// (brokerd with fake.so, mode echo), audit.log and data/hello.txt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';

const boxmaker = process.env.BX_BOXMAKER;
const work = process.env.BX_WORK;
const brokerSock = `${work}/broker.sock`;
const token = 'tok-' + process.pid + '-' + Math.random ().toString (36).slice (2);

async function freePort () {
  const s = net.createServer ();
  s.listen (0, '127.0.0.1');
  await once (s, 'listening');
  const { port } = s.address ();
  s.close ();
  await once (s, 'close');
  return port;
}

// Starts `boxmaker mcp` with ARGS; resolves once it listens, or once it exited.
async function mcp (args) {
  const child = spawn (boxmaker, ['mcp', '--socket', brokerSock, ...args],
                       { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on ('data', (d) => { err += d; });
  const exited = once (child, 'exit');
  while (!err.includes ('listening') && child.exitCode === null)
    await Promise.race ([exited, new Promise ((r) => setTimeout (r, 20))]);
  return { child, stderr: () => err,
           stop: async () => {
             if (child.exitCode === null)
               {
                 child.kill ('SIGTERM');
                 await exited;
               }
           } };
}

function tokenFile (name, mode) {
  const path = `${work}/${name}`;
  fs.writeFileSync (path, token + '\n', { mode });
  fs.chmodSync (path, mode);
  return path;
}

// The client's address and port, and the uid that opened its socket (it is on this host).
const tcpPeer = new RegExp (`^http 127\\.0\\.0\\.1:\\d+ uid ${process.getuid ()}$`);

const callBody = (id) => JSON.stringify ({
  jsonrpc: '2.0', id, method: 'tools/call',
  params: { name: 'read_file', arguments: { path: `${work}/data/hello.txt` } } });

// The audit lines of tools/call requests whose call id the MCP server made.
function auditLines () {
  return fs.readFileSync (`${work}/audit.log`, 'utf8').trim ().split ('\n').filter (Boolean)
    .map ((l) => JSON.parse (l)).filter ((l) => l.outcome === 'result');
}

test ('--http on a TCP address without a token is refused at start, loopback included', async () => {
  for (const host of ['127.0.0.1', '[::1]', 'localhost'])
    {
      const port = await freePort ();
      const srv = await mcp (['--http', `${host}:${port}`]);
      await srv.stop ();
      assert.equal (srv.child.exitCode, 2, `${host}: ${srv.stderr ()}`);
      assert.match (srv.stderr (),
                    /boxmaker mcp: --http on a TCP address needs --token-file: any local user could call tools as this user without one/);
    }
});

test ('a token file other users can read or write is refused at start', async () => {
  for (const mode of [0o644, 0o606, 0o602])
    {
      const port = await freePort ();
      const path = tokenFile (`open-token-${mode}`, mode);
      const srv = await mcp (['--http', `127.0.0.1:${port}`, '--token-file', path]);
      await srv.stop ();
      assert.equal (srv.child.exitCode, 2, srv.stderr ());
      assert.match (srv.stderr (), /the token file .* can be read or written by other users/);
    }
});

// Writes HEAD (request line and headers, maybe not all of them) and no body; resolves with
// what the server answered before it closed, or rejects.
function rawRequest (address, head) {
  return new Promise ((resolve, reject) => {
    const c = net.createConnection (address);
    let got = '';
    c.on ('data', (d) => { got += d; });
    c.on ('close', () => resolve (got));
    c.on ('error', reject);
    c.write (head);
  });
}

test ('a missing or wrong token is 401 as soon as the headers arrive, before the body', async () => {
  const port = await freePort ();
  // Its group may read the token: only other users may not.
  const srv = await mcp (['--http', `127.0.0.1:${port}`, '--token-file',
                          tokenFile ('group-token', 0o640)]);
  try
    {
      for (const auth of ['', `Authorization: Bearer ${token}x\r\n`, 'Authorization: Basic x\r\n'])
        {
          // The body is announced and never sent: the answer must not wait for it.
          const reply = await rawRequest ({ host: '127.0.0.1', port },
                                          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`
                                          + 'Content-Type: application/json\r\n'
                                          + 'Content-Length: 100000\r\n\r\n');
          assert.match (reply, /^HTTP\/1\.1 401 /, `${JSON.stringify (auth)}: ${reply}`);
        }
    }
  finally
    {
      await srv.stop ();
    }
});

// curl -i: the status and headers of the answer, lower-cased names, and its body.
function curl (args) {
  const r = spawnSync ('curl', ['-s', '-i', ...args], { encoding: 'utf8' });
  assert.equal (r.status, 0, r.stderr);
  const [head, ...body] = r.stdout.split ('\r\n\r\n');
  const lines = head.split ('\r\n');
  const headers = Object.fromEntries (lines.slice (1).map ((l) => {
    const i = l.indexOf (':');
    return [l.slice (0, i).toLowerCase (), l.slice (i + 1).trim ()];
  }));
  return { status: Number (lines[0].split (' ')[1]), headers, body: body.join ('\r\n\r\n') };
}

test ('a 401 names the protected resource metadata, which says there is no authorization server', async (t) => {
  if (spawnSync ('curl', ['--version']).status !== 0)
    return t.skip ('needs curl');
  const port = await freePort ();
  const base = `http://127.0.0.1:${port}`;
  const srv = await mcp (['--http', `127.0.0.1:${port}`, '--token-file',
                          tokenFile ('token', 0o600)]);
  try
    {
      const ping = ['-H', 'Content-Type: application/json', '--data',
                    '{"jsonrpc":"2.0","id":1,"method":"ping"}', `${base}/mcp`];
      // No token: where the metadata is, and no error (RFC 6750, 3.1).
      const none = curl (ping);
      assert.equal (none.status, 401);
      assert.equal (none.headers['www-authenticate'],
                    `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`);
      assert.match (JSON.parse (none.body).error.message, /no authorization server/);
      // A wrong token: invalid_token, and why no other token can be had.
      const wrong = curl (['-H', `Authorization: Bearer ${token}x`, ...ping]);
      assert.equal (wrong.status, 401);
      assert.match (wrong.headers['www-authenticate'],
                    new RegExp ('^Bearer error="invalid_token", error_description="[^"]*static '
                                + `bearer token[^"]*", resource_metadata="${base}/\\.well-known/`
                                + 'oauth-protected-resource"$'));

      // The metadata (RFC 9728) needs no token, at the root and at /mcp's own place.
      for (const path of ['/.well-known/oauth-protected-resource',
                          '/.well-known/oauth-protected-resource/mcp'])
        {
          const meta = curl ([`${base}${path}`]);
          assert.equal (meta.status, 200, path);
          assert.equal (meta.headers['content-type'], 'application/json');
          const doc = JSON.parse (meta.body);
          assert.equal (doc.resource, `${base}/mcp`);
          assert.deepEqual (doc.authorization_servers, []);
          assert.deepEqual (doc.bearer_methods_supported, ['header']);
          assert.match (doc.resource_name, /static bearer token .*no authorization server/);
        }
      // The Host the client used is the one it is told.
      const named = curl (['-H', `Host: localhost:${port}`,
                           `${base}/.well-known/oauth-protected-resource`]);
      assert.equal (JSON.parse (named.body).resource, `http://localhost:${port}/mcp`);

      // No authorization server: its metadata, and the endpoints a client assumes without
      // it, are a 404 whose OAuth error says why, wherever a client looks.
      for (const args of [['/.well-known/oauth-authorization-server'],
                          ['/.well-known/oauth-authorization-server/mcp'],
                          ['/.well-known/openid-configuration'],
                          ['/register', '-H', 'Content-Type: application/json', '--data', '{}'],
                          ['/authorize?response_type=code'], ['/token', '--data', 'x=1']])
        {
          const as = curl ([`${base}${args[0]}`, ...args.slice (1)]);
          assert.equal (as.status, 404, args[0]);
          const e = JSON.parse (as.body);
          assert.equal (e.error, 'invalid_request', args[0]);
          assert.match (e.error_description, /static bearer token.*no authorization server/);
        }
      // Still nothing without the token.
      assert.equal (curl (ping).status, 401);
      assert.equal (curl (['-H', `Authorization: Bearer ${token}`, ...ping]).status, 200);
    }
  finally
    {
      await srv.stop ();
    }
});

test ('half-request connections do not lock out an authenticated client', async () => {
  const port = await freePort ();
  const srv = await mcp (['--http', `127.0.0.1:${port}`, '--token-file',
                          tokenFile ('token', 0o600)]);
  const held = [];
  try
    {
      // More than the server's 64 connections, each stopping in the middle of its headers.
      for (let i = 0; i < 80; i++)
        {
          const c = net.createConnection ({ host: '127.0.0.1', port });
          c.open = true;
          c.on ('close', () => { c.open = false; });
          c.on ('error', () => {});
          c.write ('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl');
          held.push (c);
          await once (c, 'connect');
        }
      const r = await fetch (`http://127.0.0.1:${port}/mcp`, {
        method: 'POST', body: callBody (1),
        headers: { 'content-type': 'application/json', accept: 'application/json',
                   authorization: `Bearer ${token}` } });
      assert.equal (r.status, 200);
      const answer = await r.json ();
      assert.equal (answer.id, 1);
      assert.equal (answer.result.isError, false, JSON.stringify (answer));
      // Answered while half-requests were still held open: not because a deadline had
      // freed their places.
      const open = held.filter ((c) => c.open).length;
      assert.ok (open > 0, 'the call was answered only after every half-request was closed');

      const line = auditLines ().at (-1);
      assert.match (line.peer, tcpPeer, JSON.stringify (line));
    }
  finally
    {
      for (const c of held)
        c.destroy ();
      await srv.stop ();
    }
});

test ('a connection that never sends its headers is closed by the server', async () => {
  const port = await freePort ();
  const srv = await mcp (['--http', `127.0.0.1:${port}`, '--token-file',
                          tokenFile ('token', 0o600)]);
  try
    {
      const c = net.createConnection ({ host: '127.0.0.1', port });
      c.on ('error', () => {});
      await once (c, 'connect');
      c.write ('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      // No bound here: the server's deadline (30 s from accept) ends it, not this test.
      await once (c, 'close');
      assert.equal (srv.child.exitCode, null, 'the server is still running');
    }
  finally
    {
      await srv.stop ();
    }
});

test ('a call waiting for approval names its MCP peer in the audit log', async () => {
  const port = await freePort ();
  const srv = await mcp (['--http', `127.0.0.1:${port}`, '--token-file',
                          tokenFile ('token', 0o600)]);
  const ac = new AbortController ();
  try
    {
      const call = fetch (`http://127.0.0.1:${port}/mcp`, {
        method: 'POST', signal: ac.signal,
        body: JSON.stringify ({ jsonrpc: '2.0', id: 3, method: 'tools/call',
                                params: { name: 'read_file',
                                          arguments: { path: `${work}/gated/x` } } }),
        headers: { 'content-type': 'application/json', accept: 'application/json',
                   authorization: `Bearer ${token}` } });
      call.catch (() => {});
      let line;
      while (line === undefined)
        {
          await new Promise ((r) => setTimeout (r, 20));
          line = fs.readFileSync (`${work}/audit.log`, 'utf8').trim ().split ('\n')
            .filter (Boolean).map ((l) => JSON.parse (l))
            .find ((l) => l.outcome === 'pending' && l.args.path === `${work}/gated/x`);
        }
      assert.match (line.peer, tcpPeer, JSON.stringify (line));
    }
  finally
    {
      ac.abort ();
      await srv.stop ();
    }
});

test ('the audit line names the local uid behind a TCP client', async (t) => {
  if (process.getuid () !== 0 || spawnSync ('setpriv', ['--version']).status !== 0
      || spawnSync ('curl', ['--version']).status !== 0)
    return t.skip ('needs root, setpriv and curl to connect as another uid');
  const port = await freePort ();
  const srv = await mcp (['--http', `127.0.0.1:${port}`, '--token-file',
                          tokenFile ('token', 0o600)]);
  try
    {
      const r = spawnSync ('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'curl',
                                       '-s', '-H', 'Content-Type: application/json', '-H',
                                       `Authorization: Bearer ${token}`, '--data', callBody (4),
                                       `http://127.0.0.1:${port}/mcp`],
                           { encoding: 'utf8' });
      assert.equal (JSON.parse (r.stdout).id, 4, r.stdout + r.stderr);
      const line = auditLines ().at (-1);
      assert.match (line.peer, /^http 127\.0\.0\.1:\d+ uid 65534$/, JSON.stringify (line));
    }
  finally
    {
      await srv.stop ();
    }
});

test ('a Unix socket without a token is its owner\'s alone; the audit line names the peer', async () => {
  const path = `${work}/mcp-${process.pid}.sock`;
  const srv = await mcp (['--http', path]);
  try
    {
      assert.match (srv.stderr (), /listening/, srv.stderr ());
      assert.equal (fs.statSync (path).mode & 0o777, 0o600);
      const body = callBody (2);
      const reply = await rawRequest (path, `POST /mcp HTTP/1.1\r\nHost: localhost\r\n`
                                            + 'Content-Type: application/json\r\n'
                                            + `Connection: close\r\nContent-Length: ${body.length}`
                                            + `\r\n\r\n${body}`);
      assert.match (reply, /^HTTP\/1\.1 200/, reply);
      const line = auditLines ().at (-1);
      assert.match (line.peer, new RegExp (`^http unix uid ${process.getuid ()} pid \\d+$`),
                    JSON.stringify (line));

      // Another uid, which the mode alone would not stop when it is root's socket: refused.
      if (process.getuid () === 0
          && spawnSync ('setpriv', ['--version']).status === 0)
        {
          const other = spawnSync ('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups',
                                               process.execPath, '-e',
                                               `require('net').createConnection(${JSON.stringify (path)})
                                                 .on('error',(e)=>{console.log(e.code);process.exit(0)})
                                                 .on('connect',()=>{console.log('connected');process.exit(0)})`],
                                   { encoding: 'utf8' });
          assert.equal (other.stdout.trim (), 'EACCES', other.stdout + other.stderr);
        }
    }
  finally
    {
      await srv.stop ();
    }
});
