// The fixed surface the official conformance scenarios call (their
// `requirements/*.yaml` and scenario descriptions name it), written once for
// both fixtures: results that do not depend on the epoch, and the params of
// every input request a scenario expects. The legacy fixture sends those
// params as real server→client requests; the modern one embeds them in
// `input_required` results.
import { PNG_BASE64, WAV_BASE64 } from './media.mjs';

const text = (t) => ({ type: 'text', text: t });

/** Tools whose result is the same in every epoch: name → { description, result }. */
export const CONTENT_TOOLS = {
  test_simple_text: {
    description: 'Returns one text block (tools-call-simple-text)',
    result: () => ({ content: [text('This is a simple text response for testing.')] }),
  },
  test_image_content: {
    description: 'Returns one PNG image block (tools-call-image)',
    result: () => ({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }),
  },
  test_audio_content: {
    description: 'Returns one WAV audio block (tools-call-audio)',
    result: () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }),
  },
  test_embedded_resource: {
    description: 'Returns one embedded text resource (tools-call-embedded-resource)',
    result: () => ({
      content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
    }),
  },
  test_multiple_content_types: {
    description: 'Returns text, image and resource blocks (tools-call-mixed-content)',
    result: () => ({
      content: [
        text('Multiple content types test:'),
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
      ],
    }),
  },
};

/** tools-call-error: the tool fails; the SDKs turn the throw into an `isError` result. */
export const ERROR_TOOL = { name: 'test_error_handling', message: 'This tool intentionally returns an error for testing' };

/** tools-call-with-logging (2025 set): three info messages ~50 ms apart. */
export const LOG_LINES = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];

/** tools-call-with-progress: 0, 50, 100 of 100, ~50 ms apart. */
export const PROGRESS_STEPS = [0, 50, 100];

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * json-schema-2020-12 (and, through the bridge, proof that schemas pass
 * untouched): a 2020-12 inputSchema with $defs + $anchor, composition,
 * conditionals and additionalProperties.
 */
export const JSON_SCHEMA_TOOL = {
  name: 'json_schema_2020_12_tool',
  description: 'A tool whose inputSchema uses JSON Schema 2020-12 keywords',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
      address: { $anchor: 'postalAddress', type: 'object', properties: { line1: { type: 'string' }, town: { type: 'string' } } },
    },
    properties: {
      name: { type: 'string' },
      address: { $ref: '#/$defs/address' },
      reachBy: { type: 'string', enum: ['sms', 'mail'] },
      phone: { type: 'string' },
      email: { type: 'string' },
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { reachBy: { const: 'sms' } }, required: ['reachBy'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false,
  },
};

/** http-custom-header-server-validation: an argument mirrored in `Mcp-Param-Region` (SEP-2243). */
export const HEADER_TOOL = {
  name: 'test_header_param',
  description: 'Echoes its region, which clients mirror in the Mcp-Param-Region header',
  inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, note: { type: 'string' } }, required: ['region'] },
  result: ({ region }) => ({ content: [{ type: 'text', text: `region=${region}` }] }),
};

/** server-sse-polling: the tool whose SSE stream the server closes mid-call (SEP-1699). */
export const RECONNECTION_TOOL = { name: 'test_reconnection', description: 'Closes its SSE stream mid-call; the result follows on reconnection (SEP-1699)', text: 'reconnection test done' };

/** Direct resources (resources-list, resources-read-*, caching, resources-subscribe). */
export const RESOURCES = [
  {
    name: 'static-text',
    uri: 'test://static-text',
    title: 'Static Text Resource',
    description: 'A static text resource',
    mimeType: 'text/plain',
    contents: () => [{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  },
  {
    name: 'static-binary',
    uri: 'test://static-binary',
    title: 'Static Binary Resource',
    description: 'A 1x1 PNG image',
    mimeType: 'image/png',
    contents: () => [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_BASE64 }],
  },
  {
    name: 'watched-resource',
    uri: 'test://watched-resource',
    title: 'Watched Resource',
    description: 'A resource clients subscribe to',
    mimeType: 'text/plain',
    contents: () => [{ uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' }],
  },
];

/** resources-templates-read: `test://template/{id}/data`. */
export const TEMPLATE = {
  name: 'template',
  uriTemplate: 'test://template/{id}/data',
  title: 'Resource Template',
  description: 'Substitutes {id} into the data it returns',
  mimeType: 'application/json',
  contents: (uri, id) => [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
};

/** prompts-get-*: message lists by prompt. */
export const PROMPT_MESSAGES = {
  test_simple_prompt: () => [{ role: 'user', content: text('This is a simple prompt for testing.') }],
  test_prompt_with_arguments: ({ arg1, arg2 }) => [{ role: 'user', content: text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`) }],
  test_prompt_with_embedded_resource: ({ resourceUri }) => [
    { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
    { role: 'user', content: text('Please process the embedded resource above.') },
  ],
  test_prompt_with_image: () => [
    { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
    { role: 'user', content: text('Please analyze the image above.') },
  ],
};

/** completion-complete: suggestions for `test_prompt_with_arguments` arguments. */
export const COMPLETIONS = ['paris', 'park', 'party', 'test', 'testing'];
export const complete = (value) => COMPLETIONS.filter((v) => v.startsWith(value ?? ''));

const stringForm = (field) => ({ type: 'object', properties: { [field]: { type: 'string' } }, required: [field] });

/**
 * Every input request a scenario expects, by the key the 2026 scenarios use.
 * `method` + `params` are exactly what goes on the wire (embedded or sent).
 */
export const INPUTS = {
  user_name: { method: 'elicitation/create', params: { message: 'What is your name?', requestedSchema: stringForm('name') } },
  capital_question: {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: text('What is the capital of France?') }], maxTokens: 100 },
  },
  client_roots: { method: 'roots/list', params: {} },
  confirm: {
    method: 'elicitation/create',
    params: { message: 'Please confirm', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
  },
  greeting: {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: text('Generate a greeting') }], maxTokens: 50 },
  },
  step1: { method: 'elicitation/create', params: { message: 'Step 1: What is your name?', requestedSchema: stringForm('name') } },
  step2: { method: 'elicitation/create', params: { message: 'Step 2: What is your favorite color?', requestedSchema: stringForm('color') } },
  user_context: { method: 'elicitation/create', params: { message: 'What context should the prompt use?', requestedSchema: stringForm('context') } },
  /** server-stateless: test_missing_capability needs sampling the probe does not declare. */
  missing_capability: { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: text('Say hello') }], maxTokens: 20 } },
  /** server-stateless: test_streaming_elicitation asks once, after progress. */
  streaming: { method: 'elicitation/create', params: { message: 'Continue?', requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } }, required: ['go'] } } },
};

/** Which inputs `test_input_required_result_capabilities` asks for, by the capability each needs. */
export const CAPABILITY_INPUTS = [
  ['elicitation', 'user_name'],
  ['sampling', 'capital_question'],
];

/** The tools of test_input_required_result_*: which inputs each round asks (all keys of a round together). */
export const MRTR_TOOLS = {
  test_input_required_result_elicitation: [['user_name']],
  test_input_required_result_sampling: [['capital_question']],
  test_input_required_result_list_roots: [['client_roots']],
  test_input_required_result_request_state: [['confirm']],
  test_input_required_result_multiple_inputs: [['user_name', 'greeting', 'client_roots']],
  test_input_required_result_multi_round: [['step1'], ['step2']],
  test_input_required_result_tampered_state: [['confirm']],
};

/** The text a finished MRTR tool returns, from the answers it got (key → result). */
export function mrtrSummary(tool, answers) {
  const parts = Object.entries(answers).map(([key, r]) => `${key}=${describeAnswer(r)}`);
  const greeting = answers.user_name?.content?.name ? `Hello, ${answers.user_name.content.name}! ` : '';
  // input-required-result-request-state: the final text names "state-ok".
  const state = tool === 'test_input_required_result_request_state' ? 'state-ok ' : '';
  return `${greeting}${state}${tool} done: ${parts.join(', ')}`;
}

function describeAnswer(r) {
  if (!r || typeof r !== 'object') return String(r);
  if ('action' in r) return `${r.action}:${JSON.stringify(r.content ?? {})}`;
  if (Array.isArray(r.roots)) return r.roots.map((x) => x.uri).join('|');
  if (r.content && typeof r.content === 'object') return r.content.type === 'text' ? r.content.text : r.content.type;
  return JSON.stringify(r);
}

/** 2025 set: tools-call-elicitation (`test_elicitation`) asks with this schema. */
export const ELICITATION_SCHEMA = {
  type: 'object',
  properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
  required: ['username', 'email'],
};

/** 2025 set: elicitation-sep1034-defaults. */
export const SEP1034_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
  required: [],
};

/** 2025 set: elicitation-sep1330-enums, the five enum shapes. */
export const SEP1330_SCHEMA = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', description: 'Pick one', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      description: 'Pick one (titled)',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: { type: 'string', description: 'Pick one (enumNames)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
    untitledMulti: { type: 'array', description: 'Pick some', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      description: 'Pick some (titled)',
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
  required: [],
};
