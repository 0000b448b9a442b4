// SPDX-License-Identifier: Apache-2.0
// What `boxmaker mcp` tells the model of its grants, learnt from brokerd at initialize: run by
// run-sdk.sh, whose brokerd BX_WORK/narrow.sock grants shell (two folders), read_file (one)
// and http_fetch (one host and port), and not write_file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const boxmaker = process.env.BX_BOXMAKER;
const work = process.env.BX_WORK;
const project = `${work}/project`;
const docs = `${work}/docs`;

async function stdioClient (socket) {
  const client = new Client ({ name: 'boxmaker-grants-test', version: '1.0.0' });
  await client.connect (new StdioClientTransport ({
    command: boxmaker, args: ['mcp', '--socket', socket, '--timeout-ms', '20000'],
    stderr: 'pipe' }));
  return client;
}

const text = (r) => r.content.map ((c) => c.text).join ('');

test ('tools/list has only the granted tools, each naming its folders or hosts', async () => {
  const client = await stdioClient (`${work}/narrow.sock`);
  try
    {
      const { tools } = await client.listTools ();
      assert.deepEqual (tools.map ((t) => t.name), ['read_file', 'shell', 'http_fetch']);
      const by = Object.fromEntries (tools.map ((t) => [t.name, t.description]));
      assert.match (by.read_file, new RegExp (`Granted: the folder ${docs}\\.$`));
      assert.ok (by.shell.includes (`the folders ${project}, ${docs} (writable)`), by.shell);
      assert.ok (by.shell.includes (`without a cwd it runs in ${project}`), by.shell);
      assert.ok (by.http_fetch.includes ('Granted: the host api.example.com:8443.'),
                 by.http_fetch);
    }
  finally
    {
      await client.close ();
    }
});

test ('the instructions name the granted folders and hosts per tool', async () => {
  const client = await stdioClient (`${work}/narrow.sock`);
  try
    {
      const instructions = client.getInstructions ();
      assert.ok (instructions.includes (`\n- read_file: Granted: the folder ${docs}.`),
                 instructions);
      assert.ok (instructions.includes (`\n- shell: Granted: the folders ${project}, ${docs}`),
                 instructions);
      assert.ok (instructions.includes ('\n- http_fetch: Granted: the host api.example.com:8443.'),
                 instructions);
      assert.ok (!instructions.includes ('write_file'), instructions);
    }
  finally
    {
      await client.close ();
    }
});

test ('shell without a cwd runs in the first folder of its grant', async () => {
  const client = await stdioClient (`${work}/narrow.sock`);
  try
    {
      const r = await client.callTool ({ name: 'shell', arguments: { command: 'pwd' } });
      assert.equal (r.isError, false, text (r));
      // fake.so echoes the arguments toolkit would read.
      assert.deepEqual (JSON.parse (JSON.parse (text (r)).arguments_text),
                        { command: 'pwd', cwd: project });
    }
  finally
    {
      await client.close ();
    }
});

test ('without brokerd: every tool is listed and the instructions say why', async () => {
  const client = await stdioClient (`${work}/nobody.sock`);
  try
    {
      const { tools } = await client.listTools ();
      assert.deepEqual (tools.map ((t) => t.name), ['read_file', 'write_file', 'shell',
                                                     'http_fetch']);
      assert.ok (!tools.some ((t) => t.description.includes ('Granted')));
      const instructions = client.getInstructions ();
      assert.match (instructions, /The tool broker could not be reached to learn what was granted \(cannot connect to .*nobody\.sock: /);
    }
  finally
    {
      await client.close ();
    }
});
