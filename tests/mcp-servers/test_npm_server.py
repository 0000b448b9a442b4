# SPDX-License-Identifier: Apache-2.0
"""toolkit mcp_call against a real server from npm: @modelcontextprotocol/server-filesystem,
the version pinned in package-lock.json, installed with `npm ci` into BX_NPM_DIR once.
Exit 77 (skipped) says why when Node.js, npm or the package is missing; BX_REQUIRE_MCP_SDK=1
(the suite sets it) turns that into a failure."""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from mcptest import HERE, toolkit

NPM_DIR = os.environ["BX_NPM_DIR"]
ENTRY = os.path.join(NPM_DIR, "node_modules", "@modelcontextprotocol", "server-filesystem",
                     "dist", "index.js")


def skip(why):
    print(f"SKIP MCP server from npm: {why}")
    sys.exit(1 if os.environ.get("BX_REQUIRE_MCP_SDK") == "1" else 77)


def install():
    if shutil.which("node") is None:
        skip("node is not installed (Debian package nodejs)")
    if shutil.which("npm") is None:
        skip("npm is not installed (Debian package npm)")
    os.makedirs(NPM_DIR, exist_ok=True)
    lock = os.path.join(NPM_DIR, "package-lock.json")
    if os.path.exists(ENTRY) and os.path.exists(lock) and filecmp.cmp(
            os.path.join(HERE, "package-lock.json"), lock, shallow=False):
        return
    for f in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(HERE, f), NPM_DIR)
    p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=NPM_DIR)
    if p.returncode != 0 or not os.path.exists(ENTRY):
        skip("npm ci failed (is the npm registry reachable?)")


class TestFilesystemServer(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = os.path.realpath(self.dir.name)
        with open(os.path.join(self.root, "hello.txt"), "w") as f:
            f.write("hello from npm\n")
        self.command = ["node", ENTRY, self.root]

    def tearDown(self):
        self.dir.cleanup()

    def call(self, name, arguments):
        rc, out, err = toolkit(self.command, "tools/call", {"name": name, "arguments": arguments})
        self.assertEqual(rc, 0, out + err)
        return json.loads(out)

    def test_lists_its_tools_with_their_schemas(self):
        rc, out, err = toolkit(self.command)
        self.assertEqual(rc, 0, out + err)
        tools = {t["name"]: t for t in json.loads(out)["tools"]}
        self.assertIn("read_text_file", tools)
        self.assertEqual(tools["read_text_file"]["inputSchema"]["type"], "object")

    def test_reads_a_file_in_its_folder(self):
        r = self.call("read_text_file", {"path": os.path.join(self.root, "hello.txt")})
        self.assertEqual(r["content"][0]["text"], "hello from npm\n")
        self.assertNotIn("isError", r)

    def test_its_refusal_outside_its_folder_is_a_result_with_is_error(self):
        r = self.call("read_text_file", {"path": "/etc/hostname"})
        self.assertIs(r["isError"], True)
        self.assertIn("outside allowed directories", r["content"][0]["text"])

    def test_writes_a_file_in_its_folder(self):
        path = os.path.join(self.root, "new.txt")
        self.call("write_file", {"path": path, "content": "written"})
        with open(path) as f:
            self.assertEqual(f.read(), "written")


if __name__ == "__main__":
    install()
    unittest.main()
