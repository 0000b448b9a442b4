# SPDX-License-Identifier: Apache-2.0
"""toolkit mcp_call against the standard-library test server (server.py): the
conversation, each misbehaviour's fixed sentence, and nothing of a server left after the
call, whatever it did."""
import json
import os
import re
import signal
import subprocess
import tempfile
import unittest

from mcptest import PYTHON, SERVER, TOOLKIT, gone, request, toolkit, wait_for_file

MODE = "mcp_call"


def server(mode="good", mark=None):
    return [PYTHON, SERVER, mode] + ([mark] if mark else [])


class TestConversation(unittest.TestCase):
    def test_lists_the_servers_tools(self):
        rc, out, err = toolkit(server())
        self.assertEqual(rc, 0, err)
        names = [t["name"] for t in json.loads(out)["tools"]]
        self.assertEqual(names, ["echo", "read", "pid", "connect", "env"])

    def test_calls_a_tool_and_passes_its_result_through(self):
        rc, out, err = toolkit(server(), "tools/call",
                               {"name": "echo", "arguments": {"text": "héllo"}})
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out), {"content": [{"type": "text", "text": "héllo"}]})

    def test_passes_a_tools_own_error_through_as_its_result(self):
        rc, out, _ = toolkit(server(), "tools/call",
                             {"name": "read", "arguments": {"path": "/nonexistent/x"}})
        self.assertEqual(rc, 0)
        self.assertIs(json.loads(out)["isError"], True)

    def test_a_json_rpc_error_is_one_refusal_line_with_the_servers_message(self):
        rc, out, _ = toolkit(server(), "tools/call", {"name": "nosuch"})
        self.assertEqual(rc, 1)
        self.assertEqual(out, f"{MODE}: tools/call: the server answered with an error: "
                              "-32602 Unknown tool: nosuch")

    def test_arguments_larger_than_a_pipe_reach_the_server(self):
        text = "a" * (1 << 20)
        rc, out, err = toolkit(server(), "tools/call", {"name": "echo", "arguments": {"text": text}})
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["content"][0]["text"], text)

    def test_the_servers_notifications_are_skipped_and_its_ping_answered(self):
        rc, out, err = toolkit(server("chatty"), "tools/call",
                               {"name": "echo", "arguments": {"text": "after"}})
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out), {"content": [{"type": "text", "text": "after"}]})

    def test_the_servers_standard_error_never_reaches_the_result(self):
        rc, out, err = toolkit(server("stderr"), "tools/call",
                               {"name": "echo", "arguments": {"text": "clean"}})
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, '{"content":[{"type":"text","text":"clean"}]}')
        self.assertNotIn("eeee", err)

    def test_cwd_is_where_the_server_starts(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "here.txt"), "w") as f:
                f.write("in cwd")
            rc, out, err = toolkit(server(), "tools/call",
                                   {"name": "read", "arguments": {"path": "here.txt"}}, cwd=d)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["content"][0]["text"], "in cwd")


class TestBadServers(unittest.TestCase):
    def refused(self, mode, step, sentence, method="tools/list", params=None):
        rc, out, _ = toolkit(server(mode), method, params)
        self.assertEqual((rc, out), (1, f"{MODE}: {step}: {sentence}"))

    def test_a_program_that_is_not_there(self):
        rc, out, _ = toolkit(["/nonexistent/server"])
        self.assertEqual((rc, out), (1, f"{MODE}: /nonexistent/server: no such file or directory"))

    def test_a_server_that_is_not_a_program(self):
        with tempfile.NamedTemporaryFile() as f:
            os.chmod(f.name, 0o644)
            rc, out, _ = toolkit([f.name])
        self.assertEqual((rc, out), (1, f"{MODE}: {f.name}: permission denied"))

    def test_garbage_on_standard_output(self):
        self.refused("garbage", "initialize",
                     "the server wrote something that is not a JSON-RPC message")

    def test_an_answer_that_never_ends(self):
        self.refused("flood", "tools/list", "the server wrote more than 4194304 bytes")

    def test_a_server_that_exits_without_answering(self):
        self.refused("exit", "tools/list", "the server ended before it answered")

    def test_an_answer_with_a_wrong_id(self):
        self.refused("wrong-id", "tools/call", "the server answered a request it was not sent",
                     "tools/call", {"name": "echo", "arguments": {"text": "x"}})

    def test_a_result_that_is_not_an_object(self):
        self.refused("not-object", "tools/call", "the server's result is not what MCP defines "
                     "for it", "tools/call", {"name": "echo", "arguments": {"text": "x"}})

    def test_a_tool_list_without_schemas(self):
        self.refused("bad-list", "tools/list", "the server's result is not what MCP defines for it")

    def test_a_revision_toolkit_does_not_know(self):
        self.refused("old-version", "initialize", "the server speaks no MCP revision toolkit knows")


class TestNothingOutlivesTheCall(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.mark = os.path.join(self.dir.name, "mark")

    def tearDown(self):
        self.dir.cleanup()

    def test_a_server_deaf_to_eof_and_sigterm_is_killed(self):
        rc, out, err = toolkit(server("stubborn", self.mark), "tools/call",
                               {"name": "echo", "arguments": {"text": "x"}})
        self.assertEqual(rc, 0, err)
        self.assertTrue(gone(int(wait_for_file(self.mark))))

    def test_a_process_the_server_left_in_a_session_of_its_own_is_killed(self):
        rc, out, err = toolkit(server("fork-away", self.mark), "tools/call",
                               {"name": "echo", "arguments": {"text": "x"}})
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["content"][0]["text"], "x")
        leftover = wait_for_file(self.mark + ".leftover")
        self.assertIsNotNone(leftover)
        self.assertTrue(gone(int(leftover)))

    def test_a_server_that_never_answers_ends_with_toolkit(self):
        p = subprocess.Popen([TOOLKIT, MODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        p.stdin.write(request(server("silent", self.mark)))
        p.stdin.close()
        pid = wait_for_file(self.mark, p)
        self.assertIsNotNone(pid, "the server never got the request")
        p.send_signal(signal.SIGTERM)
        out = p.stdout.read().decode()
        self.assertEqual(p.wait(), 1)
        self.assertEqual(out, f"{MODE}: tools/list: toolkit was stopped before the server answered")
        self.assertTrue(gone(int(pid)))


class TestDocs(unittest.TestCase):
    def test_every_fixed_sentence_is_in_docs_mcp_servers_md(self):
        top = os.path.join(os.path.dirname(SERVER), "..", "..")
        with open(os.path.join(top, "toolkit", "mcp_server.h")) as f:
            header = f.read()
        with open(os.path.join(top, "docs", "mcp-servers.md")) as f:
            doc = f.read()
        sentences = re.findall(r'#define BX_MCP_SERVER_[A-Z_]+\s+(?:\\\s+)?"([^"]+)"', header)
        self.assertGreaterEqual(len(sentences), 7)
        for s in sentences:
            self.assertIn(s, doc)


class TestMisuse(unittest.TestCase):
    def misused(self, payload):
        p = subprocess.run([TOOLKIT, MODE], input=payload, capture_output=True)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, b"")
        return p.stderr.decode()

    def test_input_that_is_not_json(self):
        self.assertIn("the input is not JSON", self.misused(b"{"))

    def test_an_unknown_field(self):
        self.assertIn('unknown field "env"',
                      self.misused(request(server(), env={"A": "b"})))

    def test_an_empty_command(self):
        self.assertIn('"command" must be', self.misused(request([])))

    def test_another_method(self):
        self.assertIn('"method" must be', self.misused(request(server(), "resources/list")))

    def test_a_call_without_a_name(self):
        self.assertIn('"name"', self.misused(request(server(), "tools/call", {"arguments": {}})))

    def test_command_line_arguments(self):
        p = subprocess.run([TOOLKIT, MODE, "x"], input=b"", capture_output=True)
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
