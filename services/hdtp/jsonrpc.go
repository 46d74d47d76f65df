package hdtp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"pactd.dev/pactd/internal/hdtp/wire"
	"pactd.dev/pactd/internal/jws"
)

// The JSON-RPC 2.0 layer of an MCP tools/list or tools/call request, read
// strictly (one object, unique member names at every depth, valid UTF-8,
// bounded depth) and answered with exact bodies: pactd writes every byte
// the host sends back.

// maxJSONDepth bounds the nesting of a request body.
const maxJSONDepth = 64

// The JSON-RPC error codes pactd answers a request it cannot read with
// (JSON-RPC 2.0 §5.1). Protocol refusals are tool results, not these.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
)

// rpcRequest is a JSON-RPC request that passed the JSON-RPC layer.
type rpcRequest struct {
	// id is the request's id exactly as it came (a number or a string).
	id []byte
	// method is tools/list or tools/call.
	method string
	// name and args are a tools/call's tool and its arguments object
	// ({} when absent).
	name string
	args json.RawMessage
}

// rpcFailure is a request refused at the JSON-RPC layer: the finished
// error body.
type rpcFailure struct {
	body   []byte
	reason string
}

// parseRPC reads a JSON-RPC request body.
func parseRPC(body []byte) (*rpcRequest, *rpcFailure) {
	v, err := jws.DecodeValue(body, maxJSONDepth)
	if err != nil {
		return nil, &rpcFailure{rpcErrorBody(nil, rpcParseError, "Parse error"), "jsonrpc_parse"}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, &rpcFailure{rpcErrorBody(nil, rpcInvalidRequest, "Invalid Request"), "jsonrpc_invalid"}
	}
	m, _ := jws.Members(body) // the same text DecodeValue accepted
	req := &rpcRequest{}
	if id, ok := m["id"]; ok && validID(id) {
		req.id = id
	}
	if version, _, ok := jws.StringMember(m, "jsonrpc"); !ok || version != "2.0" || req.id == nil {
		return nil, &rpcFailure{rpcErrorBody(req.id, rpcInvalidRequest, "Invalid Request"), "jsonrpc_invalid"}
	}
	method, _, ok := jws.StringMember(m, "method")
	if !ok {
		return nil, &rpcFailure{rpcErrorBody(req.id, rpcInvalidRequest, "Invalid Request"), "jsonrpc_invalid"}
	}
	if method != "tools/list" && method != "tools/call" {
		return nil, &rpcFailure{rpcErrorBody(req.id, rpcMethodNotFound, "Method not found"), "jsonrpc_method"}
	}
	req.method = method
	if method == "tools/list" {
		if p, ok := m["params"]; ok && !isObject(p) {
			return nil, &rpcFailure{rpcErrorBody(req.id, rpcInvalidParams, "Invalid params"), "jsonrpc_params"}
		}
		return req, nil
	}
	name, args, ok := callParams(m["params"])
	if !ok {
		return nil, &rpcFailure{rpcErrorBody(req.id, rpcInvalidParams, "Invalid params"), "jsonrpc_params"}
	}
	req.name, req.args = name, args
	return req, nil
}

// callParams reads a tools/call's params: an object with a non-empty
// string name and an optional arguments object.
func callParams(raw json.RawMessage) (name string, args json.RawMessage, ok bool) {
	if !isObject(raw) {
		return "", nil, false
	}
	p, ok := jws.Members(raw)
	if !ok {
		return "", nil, false
	}
	name, _, ok = jws.StringMember(p, "name")
	if !ok || name == "" {
		return "", nil, false
	}
	args, present := p["arguments"]
	if !present {
		return name, json.RawMessage("{}"), true
	}
	if !isObject(args) {
		return "", nil, false
	}
	return name, args, true
}

// validID reports whether a JSON-RPC id is a string or a number (null is
// refused: pactd answers requests, and a null id names none).
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || c >= '0' && c <= '9'
}

func isObject(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}

// rpcErrorBody is a JSON-RPC error response; id nil writes null.
func rpcErrorBody(id []byte, code int, message string) []byte {
	if id == nil {
		id = []byte("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":` + strconv.Itoa(code) + `,"message":`)
	b.Write(jsonString(message))
	b.WriteString(`}}`)
	return b.Bytes()
}

// rpcResultBody wraps a result object into the response to id.
func rpcResultBody(id []byte, result []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(result) + len(id) + 32)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteByte('}')
	return b.Bytes()
}

// toolResult is an MCP CallToolResult whose one text item is text.
func toolResult(text []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(text) + 64)
	b.WriteString(`{"content":[{"type":"text","text":`)
	b.Write(jsonString(string(text)))
	b.WriteString(`}]}`)
	return b.Bytes()
}

// toolRefusal is the CallToolResult of a refusal: isError and the error
// object as its text (HDTP §6.2; Appendix A's member order).
func toolRefusal(errObj []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"isError":true,"content":[{"type":"text","text":`)
	b.Write(jsonString(string(errObj)))
	b.WriteString(`}]}`)
	return b.Bytes()
}

// refusal is a protocol refusal: the §12 error object.
type refusal struct {
	code wire.Code
	// retryAfter is rate_limited's retry_after, in whole seconds.
	retryAfter int64
	// data is the data member's JSON, or nil.
	data []byte
	// reason is pactd's name for why (logs and metrics only).
	reason string
}

// object writes the error object: {"code"} with retry_after or data.
func (r refusal) object() []byte {
	var b bytes.Buffer
	b.WriteString(`{"code":"` + string(r.code) + `"`)
	if r.retryAfter > 0 {
		b.WriteString(`,"retry_after":` + strconv.FormatInt(r.retryAfter, 10))
	}
	if r.data != nil {
		b.WriteString(`,"data":`)
		b.Write(r.data)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// jsonString writes s as a JSON string, without HTML escaping (RFC 8259
// needs none; Appendix A's bodies have none).
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// statusResult is {"status":"<s>"}.
func statusResult(s string) []byte { return []byte(`{"status":"` + s + `"}`) }
