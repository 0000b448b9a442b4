/* SPDX-License-Identifier: Apache-2.0 */
/* The tools' arguments, read and written from the tool table's fields: see bx/tool_args.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"
#include "bx/json_text.h"
#include "bx/tool_args.h"
#include "bx/utf8.h"

static char **
slot (struct bx_tool_args *args, const struct bx_tool_field *f)
{
  return (char **)((char *)args + f->offset);
}

static char *const *
slot_const (const struct bx_tool_args *args, const struct bx_tool_field *f)
{
  return (char *const *)((const char *)args + f->offset);
}

/* A tool whose arguments a model writes: an internal tool's are brokerd's own, never
 * parsed here. */
static bool
known_tool (enum bx_tool tool)
{
  return (unsigned)tool < BX_TOOL_COUNT && !bx_tool_def (tool)->internal;
}

int
bx_tool_args_from_json (enum bx_tool tool, const json_t *obj, struct bx_tool_args *out,
                        bx_error *err)
{
  if (!known_tool (tool))
    return bx_error_setc (err, EINVAL, "unknown tool %d", (int)tool);
  const char *tname = bx_tool_def (tool)->name;
  if (!json_is_object (obj))
    return bx_error_setc (err, EINVAL, "%s: the arguments must be a JSON object", tname);

  /* Every key must be one of the tool's fields.  Keys are compared with their length: a
   * key with a NUL inside ("path\u0000x") is not "path". */
  const char *key;
  size_t key_len;
  json_t *value;
  json_object_keylen_foreach ((json_t *)obj, key, key_len, value)
  {
    bool known = false;
    for (size_t f = 0; f < bx_tool_def (tool)->n_fields; f++)
      {
        const char *fname = bx_tool_def (tool)->fields[f].name;
        if (strlen (fname) == key_len && memcmp (fname, key, key_len) == 0)
          known = true;
      }
    if (!known)
      {
        cleanup_free char *shown = bx_printable (key, key_len, 64);
        return bx_error_setc (err, EINVAL, "%s: unknown field \"%s\"", tname, shown);
      }
  }

  struct bx_tool_args args = { .tool = tool };
  for (size_t f = 0; f < bx_tool_def (tool)->n_fields; f++)
    {
      const struct bx_tool_field *field = &bx_tool_def (tool)->fields[f];
      json_t *v = json_object_get (obj, field->name);
      if (v == NULL)
        {
          if (field->optional)
            continue;
          bx_tool_args_clear (&args);
          return bx_error_setc (err, EINVAL, "%s: missing field \"%s\"", tname, field->name);
        }
      if (!json_is_string (v))
        {
          bx_tool_args_clear (&args);
          return bx_error_setc (err, EINVAL, "%s: \"%s\" must be a string", tname, field->name);
        }
      /* The object may come from a parser that allows \u0000 (the frame reader does, for
       * tool output): a NUL would cut the string short for every C reader after us. */
      const char *s = json_string_value (v);
      size_t len = json_string_length (v);
      if (memchr (s, '\0', len) != NULL)
        {
          bx_tool_args_clear (&args);
          return bx_error_setc (err, EINVAL, "%s: \"%s\" must not contain a NUL byte", tname,
                                field->name);
        }
      *slot (&args, field) = bx_xstrndup (s, len);
    }

  /* toolkit reads at most BX_TOOL_ARGS_MAX bytes of canonical JSON; an object that parsed
   * from a larger frame must not produce more. */
  size_t canonical_len = 0;
  cleanup_free char *canonical = bx_tool_args_to_json (&args, &canonical_len);
  if (canonical == NULL || canonical_len > BX_TOOL_ARGS_MAX)
    {
      bx_tool_args_clear (&args);
      if (canonical == NULL)
        return bx_error_setc (err, EINVAL, "%s: the arguments cannot be encoded", tname);
      return bx_error_setc (err, EMSGSIZE, "%s: the arguments are larger than %u bytes", tname,
                            BX_TOOL_ARGS_MAX);
    }

  *out = args;
  return 0;
}

/* jansson's message for a duplicate key is "duplicate object key near '\"path\"'"; the
 * field name is the token it quotes.  Falls back to the whole message. */
static int
duplicate_key_error (const char *tname, const json_error_t *jerr, bx_error *err)
{
  const char *near = strstr (jerr->text, "near '\"");
  if (near != NULL)
    {
      const char *start = near + strlen ("near '\"");
      const char *end = strstr (start, "\"'");
      if (end != NULL)
        {
          cleanup_free char *shown = bx_printable (start, (size_t)(end - start), 64);
          return bx_error_setc (err, EINVAL, "%s: duplicate field \"%s\"", tname, shown);
        }
    }
  return bx_error_setc (err, EINVAL, "%s: duplicate field: %s", tname, jerr->text);
}

int
bx_tool_args_parse (enum bx_tool tool, const char *json, size_t len, struct bx_tool_args *out,
                    bx_error *err)
{
  if (!known_tool (tool))
    return bx_error_setc (err, EINVAL, "unknown tool %d", (int)tool);
  const char *tname = bx_tool_def (tool)->name;
  if (len > BX_TOOL_ARGS_MAX)
    return bx_error_setc (err, EMSGSIZE, "%s: the arguments are larger than %u bytes", tname,
                          BX_TOOL_ARGS_MAX);
  if (json == NULL)
    json = "";

  json_error_t jerr;
  /* JSON_ALLOW_NUL so that a \u0000 reaches bx_tool_args_from_json, which refuses it with
   * the field's name; JSON_DECODE_ANY so that "[]" or "1" is "not an object" rather than a
   * parse error. */
  json_t *obj
      = json_loadb (json, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
  if (obj == NULL)
    {
      if (json_error_code (&jerr) == json_error_duplicate_key)
        return duplicate_key_error (tname, &jerr, err);
      return bx_error_setc (err, EINVAL, "%s: the arguments are not valid JSON: %s (at byte %d)",
                            tname, jerr.text, jerr.position);
    }
  int r = bx_tool_args_from_json (tool, obj, out, err);
  json_decref (obj);
  return r;
}

json_t *
bx_tool_args_to_object (const struct bx_tool_args *args)
{
  if (args == NULL || !known_tool (args->tool))
    return NULL;
  json_t *obj = json_object ();
  if (obj == NULL)
    return NULL;
  for (size_t f = 0; f < bx_tool_def (args->tool)->n_fields; f++)
    {
      const struct bx_tool_field *field = &bx_tool_def (args->tool)->fields[f];
      const char *v = *slot_const (args, field);
      if (v == NULL && field->optional)
        continue;
      /* json_string refuses NULL and text that is not UTF-8: no JSON is better than JSON
       * toolkit would refuse or misread. */
      json_t *s = v ? json_string (v) : NULL;
      if (s == NULL || json_object_set_new (obj, field->name, s) != 0)
        {
          json_decref (obj);
          return NULL;
        }
    }
  return obj;
}

/* Written out directly (bx/json_text.h), not through bx_tool_args_to_object: brokerd makes
 * this text for every run.  The same text as json_dumps of that object (the tests compare). */
char *
bx_tool_args_to_json (const struct bx_tool_args *args, size_t *len)
{
  /* An internal tool's input is brokerd's own text, already JSON. */
  if (args != NULL && args->tool == BX_TOOL_MCP_CALL && args->request != NULL)
    {
      *len = strlen (args->request);
      return bx_xstrdup (args->request);
    }
  if (args == NULL || !known_tool (args->tool))
    return NULL;
  for (size_t f = 0; f < bx_tool_def (args->tool)->n_fields; f++)
    {
      const struct bx_tool_field *field = &bx_tool_def (args->tool)->fields[f];
      const char *v = *slot_const (args, field);
      /* No JSON is better than JSON toolkit would refuse or misread. */
      if (v == NULL ? !field->optional : !bx_utf8_valid (v, strlen (v)))
        return NULL;
    }
  struct bx_json_text t;
  bx_json_text_open (&t);
  for (size_t f = 0; f < bx_tool_def (args->tool)->n_fields; f++)
    {
      const struct bx_tool_field *field = &bx_tool_def (args->tool)->fields[f];
      const char *v = *slot_const (args, field);
      if (v != NULL)
        bx_json_text_string (&t, field->name, v);
    }
  return bx_json_text_close (&t, len);
}

json_t *
bx_tool_args_schema (enum bx_tool tool)
{
  if (!known_tool (tool))
    return NULL;
  json_t *properties = json_object ();
  json_t *required = json_array ();
  for (size_t f = 0; f < bx_tool_def (tool)->n_fields; f++)
    {
      const struct bx_tool_field *field = &bx_tool_def (tool)->fields[f];
      json_object_set_new (
          properties, field->name,
          json_pack ("{s:s, s:s}", "type", "string", "description", field->description));
      if (!field->optional)
        json_array_append_new (required, json_string (field->name));
    }
  return json_pack ("{s:s, s:o, s:o, s:b}", "type", "object", "properties", properties, "required",
                    required, "additionalProperties", false);
}

void
bx_tool_args_clear (struct bx_tool_args *args)
{
  if (args == NULL)
    return;
  free (args->path);
  free (args->content);
  free (args->command);
  free (args->cwd);
  free (args->url);
  free (args->server);
  free (args->request);
  enum bx_tool tool = args->tool;
  memset (args, 0, sizeof *args);
  args->tool = tool;
}
