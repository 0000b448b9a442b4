// SPDX-License-Identifier: Apache-2.0
// The owner's MCP servers' tools through `boxmaker mcp`, driven by the official MCP SDK: run
// by bwrap.sh once brokerd (BX_SOCKET, bwrap.so for real) has listed its four servers: py
// (server.py, five tools), garbage and silent (whose lists fail) and hostile (server.py
// hostile: names and descriptions meant to deceive), and fs when BX_FS_SERVER is set.  BX_GRANT is py's granted folder,
// BX_BESIDE a file beside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const boxmaker = process.env.BX_BOXMAKER;
const socket = process.env.BX_SOCKET;
const grant = process.env.BX_GRANT;
const beside = process.env.BX_BESIDE;

async function withClient (body) {
  const client = new Client ({ name: 'boxmaker-servers-test', version: '1.0.0' });
  await client.connect (new StdioClientTransport ({
    command: boxmaker, args: ['mcp', '--socket', socket, '--timeout-ms', '60000'],
    stderr: 'pipe' }));
  try
    {
      await body (client);
    }
  finally
    {
      await client.close ();
    }
}

test ('tools/list offers each listed tool as SERVER.TOOL, and nothing of the failed servers',
      () => withClient (async (client) => {
        const { tools } = await client.listTools ();
        const py = [ 'connect', 'echo', 'env', 'pid', 'read' ];
        // The same server again in a grant whose runtime is gvisor.so, when runsc is there.
        const pyg = process.env.BX_GVISOR_SERVER ? py.map ((t) => 'pyg.' + t) : [];
        // The Node.js filesystem server from npm (fs), when bwrap.sh installed it: its own
        // list is its version's, so only the tool bwrap.sh calls is checked.
        const names = tools.map ((t) => t.name);
        if (process.env.BX_FS_SERVER)
          assert.ok (names.includes ('fs.read_text_file'), names.join (' '));
        assert.deepEqual (names.filter ((n) => !n.startsWith ('fs.')).sort (), [
          'hostile.bigschema', 'hostile.huge', 'hostile.listschema', 'hostile.other.tool', 'hostile.read_file',
          'hostile.second', ...py.map ((t) => 'py.' + t), ...pyg ].sort ());
        const by = Object.fromEntries (tools.map ((t) => [t.name, t]));
        assert.equal (by['py.echo'].description, 'Returns its text.');
        assert.deepEqual (by['py.echo'].inputSchema, {
          type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
        // Text a model reads carries no control character, and is cut.
        for (const t of tools)
          assert.ok (!/[\u0000-\u001f\u007f-\u009f]/.test (t.description ?? ''),
                     `${t.name}: ${JSON.stringify (t.description)}`);
        assert.ok (by['hostile.read_file'].description.startsWith ('Reads.\\x1b]0;owned\\x07'),
                   by['hostile.read_file'].description);
        // Over the bound when listed: left out, the tool kept.
        assert.equal (by['hostile.huge'].description, undefined);
        // A schema that is no object schema is replaced by one that takes any object.
        assert.deepEqual (by['hostile.listschema'].inputSchema, { type: 'object' });
        // A schema over 65536 bytes is not kept: the tool takes any object.
        assert.deepEqual (by['hostile.bigschema'].inputSchema, { type: 'object' });
      }));

test ('the instructions name each listed server\'s tools and the grant they run under',
      () => withClient (async (client) => {
        const instructions = client.getInstructions ();
        // In the order each server listed them; py is the config's first grant, hostile its
        // fourth.
        assert.ok (instructions.includes (
          `\n- py.echo, py.read, py.pid, py.connect, py.env: tools of the MCP server py, run under grant 1. Granted: the folder ${grant} (read-only).`),
                   instructions);
        assert.ok (instructions.includes (
          '\n- hostile.read_file, hostile.other.tool, hostile.huge, hostile.listschema, hostile.bigschema, hostile.second: tools of the MCP server hostile, run under grant 4. Granted: the folder '),
                   instructions);
        // The failed servers offer nothing, and no line names them.
        assert.ok (!/garbage|silent/.test (instructions), instructions);
        for (const line of instructions.split ('\n'))
          assert.ok (!/[\u0000-\u001f\u007f-\u009f]/.test (line), JSON.stringify (line));
      }));

test ('tools/call of SERVER.TOOL runs the server\'s tool, its result labelled',
      () => withClient (async (client) => {
        const r = await client.callTool ({ name: 'py.echo', arguments: { text: 'hello' } });
        assert.equal (r.isError, false);
        assert.deepEqual (r.content.map ((c) => [c.type, c.text]), [['text', 'hello']]);
        assert.equal (r._meta['boxmaker/class'], 'internal');
        assert.equal (r._meta['boxmaker/untrusted'], false);
        const inside = await client.callTool ({ name: 'py.read',
                                                arguments: { path: `${grant}/inside.txt` } });
        assert.equal (inside.content[0].text, 'in the grant\n');
        const outside = await client.callTool ({ name: 'py.read',
                                                 arguments: { path: beside } });
        assert.equal (outside.isError, true);
        assert.match (outside.content[0].text, /cannot read/);
      }));

test ('names no server listed, or that pass for others\' tools, are not called',
      async () => withClient (async (client) => {
        // read_file stays the own tool, which no grant here gives: brokerd denies it, the
        // hostile server never sees it.
        const own = await client.callTool ({ name: 'read_file', arguments: { path: beside } });
        assert.equal (own.isError, true);
        assert.match (own.content[0].text, /^denied: /);
        for (const name of ['other.tool', 'hostile.evil', 'garbage.echo', 'silent.echo'])
          {
            const r = await client.callTool ({ name, arguments: {} }).catch ((e) => e);
            const text = r instanceof Error ? r.message : r.content.map ((c) => c.text).join ('');
            assert.ok (r instanceof Error || r.isError, `${name}: ${text}`);
            assert.match (text, /Unknown tool/, name);
          }
      }));
