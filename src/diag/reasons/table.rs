//! The reason table: one entry per reason code (see the parent module). Each entry is the
//! constant name (`_` for a generated family), the code, its kind and what it means. Families
//! follow the order of `spec/reasons.md`; within a family, codes follow the checks of the
//! profile, and within a check: holds, refused, then the other reasons.

use super::{Reason, ReasonFamily, ReasonKind};

reasons! {
    /// Written by every profile runner.
    Shared {
        SYNTAX_GUARD "MCP_RES_SYNTAX_GUARD" Wrong
            "The subject refused the input with a JSON-RPC parse error (or dropped it as unparseable), before any property was judged. It is the reason a syntax-defective wrong-reason mutant must meet.";
        MUTANT_REQUEST_ANSWERED "MCP_RES_MUTANT_REQUEST_ANSWERED" Wrong
            "The wrong-reason mutant of a control that a subject may meet with silence (a well-formed request for a method no server has, or the control's notification sent as a request) was answered, with a result or an error, as JSON-RPC 2.0 §4 requires of every request: the subject does not meet everything unusual with silence, so the control's silence is bound to its own defect. It is the reason such a mutant must meet; the judge reads the answer from the mutant's stored stdout.";
        SUBJECT_EXITED "MCP_RES_SUBJECT_EXITED" NotObserved
            "The subject exited, or closed its output, instead of answering.";
        NO_ANSWER "MCP_RES_NO_ANSWER" NotObserved
            "Nothing came back within the answer bound, or an observation the verdict needs is missing.";
        OPEN_FAILED "MCP_RES_OPEN_FAILED" NotObserved
            "The subject could not be started, or its opening request (`initialize`, `server/discover`) got no answer within the start-up bound (silence, a close, or the subject gone), so the probe could not be made: not observed, never a FAIL of its own.";
        OPEN_REFUSED "MCP_RES_OPEN_REFUSED" Wrong
            "The subject answered the opening request (`initialize`, or `server/discover` on 2026-07-28) with a JSON-RPC error other than a -32601 to `server/discover`, under an id the request did not carry (JSON-RPC 2.0 §5: a response's id MUST be its request's), or (over Streamable HTTP) with a response that does not carry its result (a status other than 2xx, a body without the answer, one cut at the response limit): the lifecycle's MUST to answer it with the server's capabilities is broken, so no observation that needed the conversation could be made.";
        WRONG_REASON_MUTANT_SURVIVED "MCP_RES_WRONG_REASON_MUTANT_SURVIVED" NotObserved
            "The wrong-reason mutant (a syntax-defective input, or a request invalid in another field) was met exactly as the negative control was (the same reason and the same answer: result, error code, silence or close), so the control's reason cannot be bound to the property: the check is not observed, never a PASS.";
        TOO_SLOW_TO_DECIDE "MCP_RES_TOO_SLOW_TO_DECIDE" NotObserved
            "The subject's start-up or answer time, as the preflight measured it, leaves no window within the operator's bounds in which the observation could be decided (the subject or the machine was too slow): not observed, never a FAIL.";
        ENDED_BY_RUNNER "MCP_RES_ENDED_BY_RUNNER" NotObserved
            "The subject ended after mcpres asked it to (a signal, or its stdin closed), not by itself: its end says nothing of how it met the input.";
        SUBJECT_CHANGED "MCP_RES_SUBJECT_CHANGED" Wrong
            "The subject's identity (its program and the files its arguments name, or the artifact of a server mcpres did not start) changed during the run: a digest taken before or after a check differs from the one taken at the start. The run fails: its checks did not all observe the same subject.";
        CHECK_NOT_OBSERVED "MCP_RES_CHECK_NOT_OBSERVED" NotObserved
            "The check could not be exercised against this subject (for example a subject mcpres did not start, whose output it cannot read); the detail says why.";
        UNKNOWN_METHOD_ACCEPTED "MCP_RES_UNKNOWN_METHOD_ACCEPTED" Wrong
            "A request for a method the subject does not have was answered with a result instead of an error.";
        CONVERSATION_ASSUMED "MCP_RES_CONVERSATION_ASSUMED" Wrong
            "A request made without opening a conversation first was served as if an earlier conversation (or this process) still held.";
        VALID_TWIN_REFUSED "MCP_RES_VALID_TWIN_REFUSED" NotObserved
            "The near-identical valid request sent on the same connection just before the negative control was not accepted (an error, an isError result, silence or a close), so the control's refusal cannot be bound to the property: the check is not observed, never a PASS.";
        LABEL_NOT_IN_RECORD "MCP_RES_LABEL_NOT_IN_RECORD" Wrong
            "Given by the judge: an observation's label says what its stored bytes do not show (a valid twin called refused whose accepting result the stored transcript holds; a control called refused that the bytes show served with a result; a positive called accepted whose bytes answer none of its requests). The observation is judged as the bytes give it, so its check fails, and `validate` refuses the directory whose labels say otherwise.";
        METHOD_NOT_FOUND_NOT_CREDITED "MCP_RES_METHOD_NOT_FOUND_NOT_CREDITED" NotObserved
            "The control was answered -32601 (method not found): the subject does not serve the method at all, so a refusal of the version or era it names is not observed.";
        BEHAVIOUR_LEFT_OPEN "MCP_RES_BEHAVIOUR_LEFT_OPEN" NotObserved
            "The control was met in a way the specification allows (it states no MUST against it, only a SHOULD, a MAY or nothing), so the refusal the check looks for could not be observed: not observed, never a FAIL; the detail names what was seen.";
        REVISION_NOT_SPOKEN "MCP_RES_REVISION_NOT_SPOKEN" NotObserved
            "The subject answered the evaluated revision's opening request (`server/discover`, on 2026-07-28) with -32601 (method not found): it does not speak that revision, so the property this observation needed was never exercised. Not observed, never a FAIL of its own; the checks whose positive is the opening itself stand on the revision's MUST to implement it and fail there.";
    }
    /// `mcp-res/stdio-transport/v1`.
    StdioTransport {
        FRAMING_NEWLINE_DELIMITED "MCP_RES_FRAMING_NEWLINE_DELIMITED" Holds
            "The request was answered as one LF-terminated line holding one JSON object.";
        FRAMING_EMBEDDED_NEWLINE_REFUSED "MCP_RES_FRAMING_EMBEDDED_NEWLINE_REFUSED" Refused
            "A request pretty-printed over several lines was not answered as a request.";
        FRAMING_VIOLATED "MCP_RES_FRAMING_VIOLATED" Wrong
            "The answer was not one LF-terminated line of one JSON object (split over lines, or with trailing bytes).";
        FRAMING_MULTILINE_ACCEPTED "MCP_RES_FRAMING_MULTILINE_ACCEPTED" Wrong
            "A request spread over several lines was answered as if it were one message.";
        STDOUT_PROTOCOL_ONLY "MCP_RES_STDOUT_PROTOCOL_ONLY" Holds
            "Everything the subject wrote to stdout was JSON-RPC.";
        STDOUT_ERROR_AS_PROTOCOL "MCP_RES_STDOUT_ERROR_AS_PROTOCOL" Refused
            "A request for an unknown method was refused with a JSON-RPC error on stdout, and stdout stayed protocol only.";
        STDOUT_POLLUTED "MCP_RES_STDOUT_POLLUTED" Wrong
            "The subject wrote something to stdout that is not a JSON-RPC message.";
        LINE_IGNORED "MCP_RES_LINE_IGNORED" Wrong
            "A line that is not JSON was met with no diagnostic anywhere: no parse error on stdout, nothing on stderr.";
        STDERR_DIAGNOSTICS_ONLY "MCP_RES_STDERR_DIAGNOSTICS_ONLY" Holds
            "The subject served the request and wrote no JSON-RPC message to stderr.";
        STDERR_PARSE_FAILURE_ON_PROTOCOL_CHANNEL "MCP_RES_STDERR_PARSE_FAILURE_ON_PROTOCOL_CHANNEL" Refused
            "A line that is not JSON was refused on the protocol channel (a parse error on stdout, or a diagnostic on stderr only) and the subject kept serving.";
        STDERR_CARRIES_PROTOCOL "MCP_RES_STDERR_CARRIES_PROTOCOL" Wrong
            "The subject wrote a JSON-RPC message to stderr.";
        ARGV_PASSED_VERBATIM "MCP_RES_ARGV_PASSED_VERBATIM" Holds
            "The subject received its arguments exactly as given, with no shell in between.";
        LAUNCH_NOT_SHELL_SPLIT "MCP_RES_LAUNCH_NOT_SHELL_SPLIT" Refused
            "A program name holding a space was looked up as one name and not found: the launch was not split by a shell.";
        SHELL_INTERMEDIARY "MCP_RES_SHELL_INTERMEDIARY" Wrong
            "A shell stood between the launcher and the subject.";
        ARGV_CHANGED "MCP_RES_ARGV_CHANGED" Wrong
            "The arguments the subject received differ from the ones given.";
        LAUNCH_SHELL_SPLIT "MCP_RES_LAUNCH_SHELL_SPLIT" Wrong
            "A program name holding a space was split by a shell and started.";
        PROGRAM_ABSENT "MCP_RES_PROGRAM_ABSENT" Wrong
            "The program to launch was not found, and its name holds no space, so the refusal says nothing about shell splitting.";
        LAUNCH_FAILED "MCP_RES_LAUNCH_FAILED" Wrong
            "The launch failed for another reason than a missing program.";
        EXECUTABLE_IDENTIFIED "MCP_RES_EXECUTABLE_IDENTIFIED" Holds
            "The running executable is the program, or its #! interpreter.";
        EXECUTABLE_DIGEST_CHANGED "MCP_RES_EXECUTABLE_DIGEST_CHANGED" Refused
            "The recorded digest told the program's bytes apart from the same bytes with one byte changed.";
        EXECUTABLE_MISMATCH "MCP_RES_EXECUTABLE_MISMATCH" Wrong
            "The running program is not the executable whose digest was recorded.";
        EXECUTABLE_UNCHANGED "MCP_RES_EXECUTABLE_UNCHANGED" Wrong
            "With one byte of the program changed, the recorded digest stayed the same.";
        EXECUTABLE_UNREADABLE "MCP_RES_EXECUTABLE_UNREADABLE" NotObserved
            "The executable could not be read, so no digest could be compared.";
        STARTUP_WITHIN_BOUND "MCP_RES_STARTUP_WITHIN_BOUND" Holds
            "The subject opened a conversation within the startup bound.";
        STARTUP_TIMEOUT_ENFORCED "MCP_RES_STARTUP_TIMEOUT_ENFORCED" Refused
            "Sent nothing, the subject was ended by TERM at the startup bound, within 2 s.";
        STARTUP_TIMEOUT "MCP_RES_STARTUP_TIMEOUT" Wrong
            "The subject stayed silent past the startup bound.";
        TERMINATION_NEEDED_SIGKILL "MCP_RES_TERMINATION_NEEDED_SIGKILL" Wrong
            "The subject did not exit on TERM within the grace period and had to be killed.";
        SUBJECT_ANSWERS "MCP_RES_SUBJECT_ANSWERS" Holds
            "The subject answered the request it was sent.";
        SILENT_UNTIL_ASKED "MCP_RES_SILENT_UNTIL_ASKED" Refused
            "Sent nothing for 300 ms, the subject wrote nothing to stdout.";
        UNSOLICITED_OUTPUT "MCP_RES_UNSOLICITED_OUTPUT" Wrong
            "The subject wrote to stdout before it was asked anything.";
        OUTPUT_WELL_FORMED "MCP_RES_OUTPUT_WELL_FORMED" Holds
            "Everything the subject wrote to stdout was valid UTF-8 JSON-RPC.";
        INVALID_UTF8_REFUSED "MCP_RES_INVALID_UTF8_REFUSED" Refused
            "A request with a raw 0xFF byte inside a string was refused.";
        OUTPUT_MALFORMED "MCP_RES_OUTPUT_MALFORMED" Wrong
            "The subject's stdout held bytes that are not valid UTF-8, or not JSON-RPC.";
        INVALID_UTF8_ACCEPTED "MCP_RES_INVALID_UTF8_ACCEPTED" Wrong
            "A request with a raw 0xFF byte inside a string was served.";
        PARTIAL_LINE_REASSEMBLED "MCP_RES_PARTIAL_LINE_REASSEMBLED" Holds
            "A request written in several chunks was answered once.";
        PARTIAL_LINE_NOT_DISPATCHED "MCP_RES_PARTIAL_LINE_NOT_DISPATCHED" Refused
            "A request without its LF was not dispatched within 300 ms, and was after the LF.";
        PARTIAL_LINE_ANSWERED_TWICE "MCP_RES_PARTIAL_LINE_ANSWERED_TWICE" Wrong
            "A request written in two pieces was answered more than once.";
        UNTERMINATED_LINE_DISPATCHED "MCP_RES_UNTERMINATED_LINE_DISPATCHED" Wrong
            "A request was dispatched before its line end arrived.";
        LARGE_LINE_HANDLED "MCP_RES_LARGE_LINE_HANDLED" Holds
            "A 256 KiB request was answered.";
        OVERSIZED_LINE_BOUNDED "MCP_RES_OVERSIZED_LINE_BOUNDED" Refused
            "A valid 16 MiB request line was refused with an error while the subject stayed live, or ended in a clean exit.";
        LARGE_LINE_REFUSED "MCP_RES_LARGE_LINE_REFUSED" Wrong
            "A 256 KiB request was refused.";
        OVERSIZED_LINE_ACCEPTED "MCP_RES_OVERSIZED_LINE_ACCEPTED" Wrong
            "A valid 16 MiB request line was served.";
        OVERSIZED_LINE_DROPPED_SILENTLY "MCP_RES_OVERSIZED_LINE_DROPPED_SILENTLY" Wrong
            "A valid 16 MiB request line was dropped with no error.";
        OVERSIZED_LINE_CRASHED "MCP_RES_OVERSIZED_LINE_CRASHED" Wrong
            "The subject died on a valid 16 MiB request line (a non-zero exit status or a signal): a crash is not a bounded refusal.";
        EXIT_ON_STDIN_CLOSE "MCP_RES_EXIT_ON_STDIN_CLOSE" Holds
            "At stdin EOF the subject exited by itself within 5 s.";
        EXIT_ON_SIGTERM "MCP_RES_EXIT_ON_SIGTERM" Refused
            "The subject exited within 2 s of TERM.";
        RUNS_AFTER_STDIN_CLOSE "MCP_RES_RUNS_AFTER_STDIN_CLOSE" Wrong
            "The subject kept running after its stdin was closed.";
        EXIT_ON_UNRELATED_SIGNAL "MCP_RES_EXIT_ON_UNRELATED_SIGNAL" Wrong
            "The subject exited on a signal other than the one the probe is about.";
        NO_TERMINATION_REQUESTED "MCP_RES_NO_TERMINATION_REQUESTED" NotObserved
            "No termination was requested, and the subject kept running.";
        CHILD_TREE_EMPTY_AFTER_EXIT "MCP_RES_CHILD_TREE_EMPTY_AFTER_EXIT" Holds
            "With a child seen, nothing of the subject's process tree was left after stdin EOF.";
        CHILD_TREE_TERMINATED "MCP_RES_CHILD_TREE_TERMINATED" Refused
            "TERM to the subject alone took its children too.";
        SUBJECT_DID_NOT_EXIT "MCP_RES_SUBJECT_DID_NOT_EXIT" Wrong
            "The subject did not exit, so its process tree could not be judged.";
        CHILD_LEFT_BEHIND "MCP_RES_CHILD_LEFT_BEHIND" Wrong
            "A child of the subject was still running, or was adopted as an orphan, after the subject exited.";
        CHILDREN_KILLED_BY_RUNNER "MCP_RES_CHILDREN_KILLED_BY_RUNNER" Wrong
            "The subject's children went only because the runner killed its process group.";
        BACKPRESSURE_NO_LOSS "MCP_RES_BACKPRESSURE_NO_LOSS" Holds
            "300 requests written while stdout was unread for 300 ms were all answered once.";
        BLOCKED_WRITER_TERMINATES "MCP_RES_BLOCKED_WRITER_TERMINATES" Refused
            "Blocked on a full stdout, the subject exited within 2 s of TERM.";
        BACKPRESSURE_LOST_RESPONSES "MCP_RES_BACKPRESSURE_LOST_RESPONSES" Wrong
            "Of the requests written while stdout was unread, some were not answered.";
        EXIT_ON_SIGTERM_UNBLOCKED "MCP_RES_EXIT_ON_SIGTERM_UNBLOCKED" Wrong
            "The subject exited on TERM only after its output was read again, not while it was blocked.";
        CONCURRENT_ANSWERED_BY_ID "MCP_RES_CONCURRENT_ANSWERED_BY_ID" Holds
            "Five requests in one write were all answered, matched by id.";
        BATCH_REFUSED "MCP_RES_BATCH_REFUSED" Refused
            "A JSON-RPC batch (an array of requests) was refused, with no results.";
        CONCURRENT_REQUEST_LOST "MCP_RES_CONCURRENT_REQUEST_LOST" Wrong
            "One of the requests written together was not answered.";
        BATCH_ACCEPTED "MCP_RES_BATCH_ACCEPTED" Wrong
            "A JSON-RPC batch was served.";
        INTERRUPT_HONOURED "MCP_RES_INTERRUPT_HONOURED" Holds
            "Idle, the subject exited within 2 s of INT.";
        INTERRUPT_WITH_INFLIGHT_CLEAN "MCP_RES_INTERRUPT_WITH_INFLIGHT_CLEAN" Refused
            "With 50 requests in flight, the subject exited within 2 s of INT, with no torn last line.";
        INTERRUPT_TORN_FRAME "MCP_RES_INTERRUPT_TORN_FRAME" Wrong
            "Interrupted with requests in flight, the subject left a torn last line on stdout.";
        INTERRUPT_IGNORED "MCP_RES_INTERRUPT_IGNORED" Wrong
            "The subject did not exit on INT.";
        NO_INTERRUPT_REQUESTED "MCP_RES_NO_INTERRUPT_REQUESTED" NotObserved
            "No interrupt was requested, and the subject kept running.";
        CONVERSATION_BOUND_TO_MESSAGES "MCP_RES_CONVERSATION_BOUND_TO_MESSAGES" Holds
            "Two requests (on 2026-07-28 from two self-described clients) were both answered.";
        RESTART_IS_NEW_CONVERSATION "MCP_RES_RESTART_IS_NEW_CONVERSATION" Refused
            "A fresh process asked for tools/list with no conversation (no initialize; on 2026-07-28 no _meta) refused it.";
        SECOND_CLIENT_REFUSED "MCP_RES_SECOND_CLIENT_REFUSED" Wrong
            "The second of two requests (on 2026-07-28 from another self-described client) was not served.";
        ERA_OPENING_ANSWERED "MCP_RES_ERA_OPENING_ANSWERED" Holds
            "The opening of the revision's era (discovery or legacy initialize) was answered with the revision asked.";
        NOTIFICATION_NOT_ANSWERED "MCP_RES_NOTIFICATION_NOT_ANSWERED" Refused
            "server/discover sent as a notification got no response.";
        ERA_OPENING_WRONG_VERSION "MCP_RES_ERA_OPENING_WRONG_VERSION" Wrong
            "The era's opening was answered with another protocol version than the one asked.";
        ERA_OPENING_REFUSED "MCP_RES_ERA_OPENING_REFUSED" Wrong
            "The era's opening was refused with an error.";
        NOTIFICATION_ANSWERED "MCP_RES_NOTIFICATION_ANSWERED" Wrong
            "server/discover sent as a notification got a response.";
    }
    /// `mcp-res/protocol-revision/v1`.
    ProtocolRevision {
        REQUEST_REFUSED "MCP_RES_REQUEST_REFUSED" Wrong
            "A request the property allows was refused with an error.";
        REVISION_EXPLICIT "MCP_RES_REVISION_EXPLICIT" Holds
            "On 2025-11-25 initialize echoed the revision; on 2026-07-28 requests naming it were served.";
        REVISION_MISSING_REFUSED "MCP_RES_REVISION_MISSING_REFUSED" Refused
            "A request without a protocol revision was refused.";
        REVISION_NOT_HONOURED "MCP_RES_REVISION_NOT_HONOURED" Wrong
            "A request naming its protocol revision was served under another one.";
        REVISION_MISSING_ACCEPTED "MCP_RES_REVISION_MISSING_ACCEPTED" Wrong
            "A request without a protocol revision was served.";
        UNSUPPORTED_VERSION_ECHOED "MCP_RES_UNSUPPORTED_VERSION_ECHOED" Wrong
            "A request for an unsupported protocol version was answered with that same version, as if supported.";
        UNKNOWN_VERSION_ADVERTISED "MCP_RES_UNKNOWN_VERSION_ADVERTISED" Wrong
            "The answer to an unsupported version named a version that is not a known revision.";
        UNSUPPORTED_VERSION_ACCEPTED "MCP_RES_UNSUPPORTED_VERSION_ACCEPTED" Wrong
            "A request for an unsupported protocol version was served.";
        SUPPORTED_VERSIONS_NOT_ADVERTISED "MCP_RES_SUPPORTED_VERSIONS_NOT_ADVERTISED" Wrong
            "An unsupported version was refused without naming the versions the subject supports.";
        VERSIONS_ADVERTISED "MCP_RES_VERSIONS_ADVERTISED" Holds
            "A released revision was answered (2025-11-25), or discover listed 2026-07-28.";
        SUPPORTED_VERSION_ADVERTISED "MCP_RES_SUPPORTED_VERSION_ADVERTISED" Refused
            "A request for an unsupported version (a date before 2000, drawn per run) was met with a released revision counter-offered, or with -32022 and data.supported.";
        VERSIONS_NOT_ADVERTISED "MCP_RES_VERSIONS_NOT_ADVERTISED" Wrong
            "The subject did not advertise the protocol versions it supports.";
        SUPPORTED_VERSION_SERVED "MCP_RES_SUPPORTED_VERSION_SERVED" Holds
            "The evaluated revision was served.";
        UNSUPPORTED_VERSION_REFUSED "MCP_RES_UNSUPPORTED_VERSION_REFUSED" Refused
            "An unsupported version (a date before 2000, drawn per run) was not echoed (2025-11-25), or got exactly -32022 (2026-07-28).";
        SUPPORTED_VERSION_NOT_SERVED "MCP_RES_SUPPORTED_VERSION_NOT_SERVED" Wrong
            "A request for a supported version was not served under it.";
        UNSUPPORTED_VERSION_WRONG_ERROR "MCP_RES_UNSUPPORTED_VERSION_WRONG_ERROR" Wrong
            "An unsupported version was refused, but with another error than the unsupported-version one.";
        ERA_PROBE_ANSWERED "MCP_RES_ERA_PROBE_ANSWERED" Holds
            "A dual-era probe: server/discover was answered (2026-07-28), or answered or refused with -32601 and initialize then worked (2025-11-25).";
        ERA_PROBE_VERSION_REFUSED "MCP_RES_ERA_PROBE_VERSION_REFUSED" Refused
            "server/discover naming a bogus version was refused.";
        ERA_PROBE_REFUSED "MCP_RES_ERA_PROBE_REFUSED" Wrong
            "The era probe was refused with an error that names no version.";
        LEGACY_FALLBACK_REFUSED "MCP_RES_LEGACY_FALLBACK_REFUSED" Wrong
            "After the modern opening was refused, the legacy fallback was refused too.";
        ERA_PROBE_BOGUS_VERSION_ACCEPTED "MCP_RES_ERA_PROBE_BOGUS_VERSION_ACCEPTED" Wrong
            "An era probe naming a version that does not exist was served.";
        STDIO_LEGACY_INITIALIZE_SERVED "MCP_RES_STDIO_LEGACY_INITIALIZE_SERVED" Holds
            "initialize for 2025-11-25 on a fresh process was served.";
        REINITIALIZE_REFUSED "MCP_RES_REINITIALIZE_REFUSED" Refused
            "A second initialize on the same conversation was refused.";
        STDIO_LEGACY_VERSION_CHANGED "MCP_RES_STDIO_LEGACY_VERSION_CHANGED" Wrong
            "A legacy initialize over stdio was answered with another version than the one asked.";
        REINITIALIZE_ACCEPTED "MCP_RES_REINITIALIZE_ACCEPTED" Wrong
            "A second initialize on the same conversation was served.";
        REQUEST_ID_ECHOED "MCP_RES_REQUEST_ID_ECHOED" Holds
            "String and integer ids were answered under the same id.";
        NULL_ID_REFUSED "MCP_RES_NULL_ID_REFUSED" Refused
            "A request with id null was refused or ignored.";
        REQUEST_ID_NOT_ECHOED "MCP_RES_REQUEST_ID_NOT_ECHOED" Wrong
            "The answer did not carry the request's id unchanged.";
        NULL_ID_ACCEPTED "MCP_RES_NULL_ID_ACCEPTED" Wrong
            "A request with a null id was served.";
        RESULT_ID_TYPED "MCP_RES_RESULT_ID_TYPED" Holds
            "An integer id and the same digits as a string were each answered under their own id, type kept.";
        INVALID_ID_TYPE_REFUSED "MCP_RES_INVALID_ID_TYPE_REFUSED" Refused
            "A request with an object id was refused.";
        RESULT_ID_RETYPED "MCP_RES_RESULT_ID_RETYPED" Wrong
            "The answer's id changed type (a number came back as a string, or the reverse).";
        INVALID_ID_TYPE_ACCEPTED "MCP_RES_INVALID_ID_TYPE_ACCEPTED" Wrong
            "A request with an object id was served.";
        CAPABILITIES_DECLARED "MCP_RES_CAPABILITIES_DECLARED" Holds
            "A capabilities object was declared.";
        UNDECLARED_CAPABILITY_REFUSED "MCP_RES_UNDECLARED_CAPABILITY_REFUSED" Refused
            "The list method of a capability the subject did not declare was refused.";
        CAPABILITIES_MISSING "MCP_RES_CAPABILITIES_MISSING" Wrong
            "The subject declared no capabilities.";
        UNDECLARED_CAPABILITY_SERVED "MCP_RES_UNDECLARED_CAPABILITY_SERVED" Wrong
            "The list method of a capability the subject did not declare was served.";
        EXTENSIONS_WELL_DECLARED "MCP_RES_EXTENSIONS_WELL_DECLARED" Holds
            "experimental and extensions, where present, map names to objects.";
        UNDECLARED_EXTENSION_REFUSED "MCP_RES_UNDECLARED_EXTENSION_REFUSED" Refused
            "A request for the unregistered extension method io.mcpres.unregistered/probe was refused.";
        EXTENSIONS_MALFORMED "MCP_RES_EXTENSIONS_MALFORMED" Wrong
            "experimental or extensions does not map names to objects.";
        UNDECLARED_EXTENSION_SERVED "MCP_RES_UNDECLARED_EXTENSION_SERVED" Wrong
            "A request for the unregistered extension method io.mcpres.unregistered/probe was served.";
        SCHEMA_DIALECT_IDENTIFIED "MCP_RES_SCHEMA_DIALECT_IDENTIFIED" Holds
            "Every tool's inputSchema is an object schema, and its $schema a known dialect.";
        SCHEMA_VIOLATION_REFUSED "MCP_RES_SCHEMA_VIOLATION_REFUSED" Refused
            "A call with a wrongly typed required argument was refused (an error or isError).";
        SCHEMA_DIALECT_UNKNOWN "MCP_RES_SCHEMA_DIALECT_UNKNOWN" Wrong
            "A tool's inputSchema is not an object schema, or its $schema is not a known dialect.";
        SCHEMA_VIOLATION_ACCEPTED "MCP_RES_SCHEMA_VIOLATION_ACCEPTED" Wrong
            "A call with a wrongly typed required argument was served.";
        SAFE_INTEGER_PRESERVED "MCP_RES_SAFE_INTEGER_PRESERVED" Holds
            "Id 2^53-1 was answered under itself.";
        UNSAFE_INTEGER_NOT_CORRUPTED "MCP_RES_UNSAFE_INTEGER_NOT_CORRUPTED" Refused
            "Id 2^53+1 was never answered under a rounded neighbour.";
        NOT_AN_UNSAFE_INTEGER "MCP_RES_NOT_AN_UNSAFE_INTEGER" NotObserved
            "The probe could not send an integer above 2^53-1, so no corruption could be observed.";
        UNSAFE_INTEGER_CORRUPTED "MCP_RES_UNSAFE_INTEGER_CORRUPTED" Wrong
            "Id 2^53+1 was answered under a rounded neighbour.";
        INTERLEAVED_MATCHED_BY_ID "MCP_RES_INTERLEAVED_MATCHED_BY_ID" Holds
            "Two requests in one write were answered, matched by id.";
        STRAY_RESPONSE_IGNORED "MCP_RES_STRAY_RESPONSE_IGNORED" Refused
            "A stray response between requests got no reply.";
        INTERLEAVED_LOST "MCP_RES_INTERLEAVED_LOST" Wrong
            "One of the interleaved requests was not answered.";
        STRAY_RESPONSE_ANSWERED "MCP_RES_STRAY_RESPONSE_ANSWERED" Wrong
            "A stray response between requests got a reply.";
        EACH_CONNECTION_OPENS_ITS_OWN "MCP_RES_EACH_CONNECTION_OPENS_ITS_OWN" Holds
            "Two processes, each opened on its own, each served.";
        NO_STATE_ACROSS_CONVERSATIONS "MCP_RES_NO_STATE_ACROSS_CONVERSATIONS" Refused
            "On 2025-11-25, tools/list before initialize on a fresh process was refused; on 2026-07-28, after a valid request, one naming a bogus version got -32022.";
        CONNECTION_NOT_SERVED "MCP_RES_CONNECTION_NOT_SERVED" Wrong
            "A process opened on its own did not serve.";
        VERSION_REFUSED_WRONG_ERROR "MCP_RES_VERSION_REFUSED_WRONG_ERROR" Wrong
            "A version was refused with another error than the unsupported-version one.";
        EARLIER_VERSION_CARRIED_OVER "MCP_RES_EARLIER_VERSION_CARRIED_OVER" Wrong
            "A conversation was served under the protocol version of an earlier one.";
        REQUEST_METADATA_HONOURED "MCP_RES_REQUEST_METADATA_HONOURED" Holds
            "A request carrying its protocol version and client capabilities in _meta was served.";
        REQUEST_METADATA_REQUIRED "MCP_RES_REQUEST_METADATA_REQUIRED" Refused
            "A request whose _meta lacks the client capabilities was refused.";
        REQUEST_METADATA_INCOMPLETE_ACCEPTED "MCP_RES_REQUEST_METADATA_INCOMPLETE_ACCEPTED" Wrong
            "A request whose _meta lacks the client capabilities was served.";
        DISCOVER_COMPLETE "MCP_RES_DISCOVER_COMPLETE" Holds
            "The discover result had supportedVersions, capabilities and the server info in _meta.";
        DISCOVER_INVALID_PARAMS_REFUSED "MCP_RES_DISCOVER_INVALID_PARAMS_REFUSED" Refused
            "server/discover with params 5 was refused.";
        DISCOVER_INCOMPLETE "MCP_RES_DISCOVER_INCOMPLETE" Wrong
            "The server discovery answer lacks a field the revision requires.";
        DISCOVER_INVALID_PARAMS_ACCEPTED "MCP_RES_DISCOVER_INVALID_PARAMS_ACCEPTED" Wrong
            "server/discover with params 5 was served.";
        SESSIONLESS_SERVED "MCP_RES_SESSIONLESS_SERVED" Holds
            "A request as the first message, with no discover, was served.";
        SESSION_ID_NOT_REQUIRED "MCP_RES_SESSION_ID_NOT_REQUIRED" Refused
            "A request carrying an unknown session id in _meta was served as usual.";
        SESSION_ID_ASSUMED "MCP_RES_SESSION_ID_ASSUMED" Wrong
            "A request carrying an unknown session id was refused: the subject assumed sessions.";
        RESULT_TYPE_PRESENT "MCP_RES_RESULT_TYPE_PRESENT" Holds
            "Results carried resultType.";
        ERROR_CARRIES_NO_RESULT "MCP_RES_ERROR_CARRIES_NO_RESULT" Refused
            "An unknown method's error carried no result.";
        RESULT_TYPE_MISSING "MCP_RES_RESULT_TYPE_MISSING" Wrong
            "A result lacked resultType.";
        ERROR_WITH_RESULT "MCP_RES_ERROR_WITH_RESULT" Wrong
            "An unknown method's error answer carried a result.";
    }
    /// `mcp-res/streamable-http/v1`.
    StreamableHttp {
        _ "MCP_RES_JSONRPC_ERROR_{n}" Wrong
            "The subject answered with a JSON-RPC error of code -n (n is the code's magnitude), which is not the reason the probe expects.";
        _ "MCP_RES_HTTP_STATUS_{n}" Wrong
            "The subject answered with HTTP status n (not 2xx) and no JSON-RPC answer, which is not the reason the probe expects.";
        HTTP_NO_ANSWER_FRAME "MCP_RES_HTTP_NO_ANSWER_FRAME" NotObserved
            "A 2xx HTTP answer carried no JSON-RPC answer to the request.";
        HTTP_CLOSED_WITHOUT_RESPONSE "MCP_RES_HTTP_CLOSED_WITHOUT_RESPONSE" Wrong
            "The subject closed the connection without an HTTP response.";
        HTTP_AUTHENTICATED "MCP_RES_HTTP_AUTHENTICATED" Holds
            "With the run's synthetic bearer credential a request was answered, and a subject mcpres started listened on loopback only.";
        HTTP_UNAUTHENTICATED_REFUSED "MCP_RES_HTTP_UNAUTHENTICATED_REFUSED" Refused
            "The same request without Authorization got 401.";
        HTTP_UNAUTHENTICATED_ACCEPTED "MCP_RES_HTTP_UNAUTHENTICATED_ACCEPTED" Wrong
            "A request without credentials was served.";
        HTTP_LISTENER_NOT_LOOPBACK "MCP_RES_HTTP_LISTENER_NOT_LOOPBACK" Wrong
            "The subject listened on an address that is not loopback.";
        HTTP_RESPONSE_BOUND "MCP_RES_HTTP_RESPONSE_BOUND" Holds
            "Two requests sent at once on two connections: each response carried exactly the answer to its own id.";
        HTTP_UNBINDABLE_ID_REFUSED "MCP_RES_HTTP_UNBINDABLE_ID_REFUSED" Refused
            "A request with id null was refused: 400, or a -32600 error.";
        HTTP_RESPONSE_MISBOUND "MCP_RES_HTTP_RESPONSE_MISBOUND" Wrong
            "The response did not answer the request it was sent for.";
        HTTP_UNBINDABLE_ID_ACCEPTED "MCP_RES_HTTP_UNBINDABLE_ID_ACCEPTED" Wrong
            "A request with id null was served.";
        HTTP_MEDIA_TYPE_MATCHES_BODY "MCP_RES_HTTP_MEDIA_TYPE_MATCHES_BODY" Holds
            "The answer's media type was application/json or text/event-stream and its body decoded as that type.";
        HTTP_UNACCEPTABLE_MEDIA_REFUSED "MCP_RES_HTTP_UNACCEPTABLE_MEDIA_REFUSED" Refused
            "Accept: text/html got 406.";
        HTTP_MEDIA_TYPE_MISMATCH "MCP_RES_HTTP_MEDIA_TYPE_MISMATCH" Wrong
            "The response's Content-Type did not match its body.";
        HTTP_UNACCEPTABLE_MEDIA_ACCEPTED "MCP_RES_HTTP_UNACCEPTABLE_MEDIA_ACCEPTED" Wrong
            "A request with Accept: text/html was served.";
        HTTP_STREAM_CARRIED_TO_RESULT "MCP_RES_HTTP_STREAM_CARRIED_TO_RESULT" Holds
            "A streaming tool call was answered on one event stream carrying its progress and then its result.";
        HTTP_STREAM_ENDED_WITH_ERROR "MCP_RES_HTTP_STREAM_ENDED_WITH_ERROR" Refused
            "The streaming tool called with a wrongly typed argument ended with an error answering its id (a JSON-RPC error or isError).";
        HTTP_NOT_STREAMED "MCP_RES_HTTP_NOT_STREAMED" Wrong
            "A call that should stream was answered without a stream.";
        HTTP_STREAM_ENDED_EARLY "MCP_RES_HTTP_STREAM_ENDED_EARLY" Wrong
            "The response stream ended before it carried the result.";
        HTTP_INVALID_ARGUMENTS_ACCEPTED "MCP_RES_HTTP_INVALID_ARGUMENTS_ACCEPTED" Wrong
            "The streaming tool called with a wrongly typed argument was served.";
        HTTP_EVENTS_FLUSHED_INCREMENTALLY "MCP_RES_HTTP_EVENTS_FLUSHED_INCREMENTALLY" Holds
            "The streaming tool's first progress event arrived at least 200 ms before its result.";
        HTTP_EVENT_STREAM_NOT_ACCEPTED_REFUSED "MCP_RES_HTTP_EVENT_STREAM_NOT_ACCEPTED_REFUSED" Refused
            "Accept: application/json alone got 406.";
        HTTP_EVENTS_BUFFERED "MCP_RES_HTTP_EVENTS_BUFFERED" Wrong
            "The streaming tool's progress events were held back and delivered with its result.";
        HTTP_EVENT_STREAM_NOT_ACCEPTED_ACCEPTED "MCP_RES_HTTP_EVENT_STREAM_NOT_ACCEPTED_ACCEPTED" Wrong
            "A request with Accept: application/json alone was served.";
        HTTP_CONNECTION_KEPT_ALIVE "MCP_RES_HTTP_CONNECTION_KEPT_ALIVE" Holds
            "Two requests in turn on one connection were both answered on it.";
        HTTP_CLOSE_HONOURED "MCP_RES_HTTP_CLOSE_HONOURED" Refused
            "A request with Connection: close was answered, and the subject then closed the connection within 1 s.";
        HTTP_CONNECTION_NOT_REUSED "MCP_RES_HTTP_CONNECTION_NOT_REUSED" Wrong
            "A second request on the same connection was not served.";
        HTTP_CLOSE_IGNORED "MCP_RES_HTTP_CLOSE_IGNORED" Wrong
            "After a request with Connection: close, the connection stayed open.";
        HTTP_HEADERS_AGREE_WITH_BODY "MCP_RES_HTTP_HEADERS_AGREE_WITH_BODY" Holds
            "The response's headers agreed with its body.";
        HTTP_HEADER_BODY_MISMATCH_REFUSED "MCP_RES_HTTP_HEADER_BODY_MISMATCH_REFUSED" Refused
            "A request whose headers disagree with its body (2026-07-28: Mcp-Method naming another method; 2025-11-25: the session id in _meta only) was refused with 400.";
        HTTP_HEADER_BODY_MISMATCH_ACCEPTED "MCP_RES_HTTP_HEADER_BODY_MISMATCH_ACCEPTED" Wrong
            "A request whose headers disagree with its body was served.";
        HTTP_NOTIFICATION_202 "MCP_RES_HTTP_NOTIFICATION_202" Holds
            "A notification was accepted with 202 and no body.";
        HTTP_METHOD_NOT_ALLOWED_REFUSED "MCP_RES_HTTP_METHOD_NOT_ALLOWED_REFUSED" Refused
            "A PUT to the endpoint got 405.";
        HTTP_NOTIFICATION_STATUS_WRONG "MCP_RES_HTTP_NOTIFICATION_STATUS_WRONG" Wrong
            "A notification was accepted with another status than 202.";
        HTTP_PUT_ACCEPTED "MCP_RES_HTTP_PUT_ACCEPTED" Wrong
            "A PUT to the endpoint was served.";
        HTTP_CONTENT_TYPE_DECLARED "MCP_RES_HTTP_CONTENT_TYPE_DECLARED" Holds
            "Every answer declared application/json or text/event-stream.";
        HTTP_UNSUPPORTED_CONTENT_TYPE_REFUSED "MCP_RES_HTTP_UNSUPPORTED_CONTENT_TYPE_REFUSED" Refused
            "Content-Type: text/plain got an HTTP error status for input the server cannot accept (415, 400, 406 or 422).";
        HTTP_CONTENT_TYPE_MISSING "MCP_RES_HTTP_CONTENT_TYPE_MISSING" Wrong
            "An answer declared neither application/json nor text/event-stream.";
        HTTP_UNSUPPORTED_CONTENT_TYPE_ACCEPTED "MCP_RES_HTTP_UNSUPPORTED_CONTENT_TYPE_ACCEPTED" Wrong
            "A request with Content-Type: text/plain was served.";
        HTTP_SPLIT_BODY_ASSEMBLED "MCP_RES_HTTP_SPLIT_BODY_ASSEMBLED" Holds
            "A body written in two parts 200 ms apart was answered once.";
        HTTP_INTERRUPTED_BODY_DISCARDED "MCP_RES_HTTP_INTERRUPTED_BODY_DISCARDED" Refused
            "After half its declared Content-Length the client stopped writing: no answer to that id (or a 400, a 408 or the close), and the subject served afterwards.";
        HTTP_INTERRUPTED_BODY_EXECUTED "MCP_RES_HTTP_INTERRUPTED_BODY_EXECUTED" Wrong
            "A request whose body was cut short by the client was executed.";
        HTTP_STOPPED_SERVING "MCP_RES_HTTP_STOPPED_SERVING" Wrong
            "After the fault, the subject was still running but no longer served requests.";
        HTTP_ANSWER_READ_TO_END "MCP_RES_HTTP_ANSWER_READ_TO_END" Holds
            "A call that takes a moment, read to its end, was answered.";
        HTTP_EARLY_CLOSE_ABSORBED "MCP_RES_HTTP_EARLY_CLOSE_ABSORBED" Refused
            "The same call, its connection closed by the client once the request was written: the subject kept serving.";
        HTTP_ANSWER_INCOMPLETE "MCP_RES_HTTP_ANSWER_INCOMPLETE" Wrong
            "The answer ended before it was complete.";
        HTTP_ANSWERED_WITHIN_BOUND "MCP_RES_HTTP_ANSWERED_WITHIN_BOUND" Holds
            "A request written at once was answered within the answer bound.";
        HTTP_STALLED_REQUEST_TIMED_OUT "MCP_RES_HTTP_STALLED_REQUEST_TIMED_OUT" Refused
            "A request line and one header, then nothing: the subject closed the connection or answered 408 within the idle bound.";
        HTTP_STALLED_REQUEST_HELD "MCP_RES_HTTP_STALLED_REQUEST_HELD" Wrong
            "A request that stalled mid-send was held open with no time-out.";
        HTTP_RETRY_ANSWERED "MCP_RES_HTTP_RETRY_ANSWERED" Holds
            "A request abandoned by the client and sent again with a new id on a new connection was answered.";
        HTTP_STALE_RETRY_REFUSED "MCP_RES_HTTP_STALE_RETRY_REFUSED" Refused
            "A retry naming an unknown session id got 404 (2025-11-25), or one naming an unsupported revision drawn per run got 400 (2026-07-28).";
        HTTP_STALE_RETRY_ACCEPTED "MCP_RES_HTTP_STALE_RETRY_ACCEPTED" Wrong
            "A retry naming an unknown session id or an unknown revision was served.";
        HTTP_ANSWERED_ONCE "MCP_RES_HTTP_ANSWERED_ONCE" Holds
            "One request got exactly one answer frame.";
        HTTP_STRAY_RESPONSE_NOT_ANSWERED "MCP_RES_HTTP_STRAY_RESPONSE_NOT_ANSWERED" Refused
            "A JSON-RPC response the subject never asked for, delivered twice, got no answer frame, and the subject kept serving.";
        HTTP_ANSWERED_TWICE "MCP_RES_HTTP_ANSWERED_TWICE" Wrong
            "The request was answered more than once.";
        HTTP_STRAY_RESPONSE_ANSWERED "MCP_RES_HTTP_STRAY_RESPONSE_ANSWERED" Wrong
            "A JSON-RPC response the subject never asked for was answered.";
        HTTP_STREAM_COMPLETED "MCP_RES_HTTP_STREAM_COMPLETED" Holds
            "A streaming call read to its end was answered.";
        HTTP_STREAM_CLOSE_ABSORBED "MCP_RES_HTTP_STREAM_CLOSE_ABSORBED" Refused
            "The same call, its stream closed by the client after the first event: the subject kept serving.";
        HTTP_STREAM_FAILED "MCP_RES_HTTP_STREAM_FAILED" Wrong
            "The response stream failed before completion.";
        HTTP_CHUNKED_BODY_ASSEMBLED "MCP_RES_HTTP_CHUNKED_BODY_ASSEMBLED" Holds
            "A chunked request body of three chunks was answered.";
        HTTP_MALFORMED_CHUNK_REFUSED "MCP_RES_HTTP_MALFORMED_CHUNK_REFUSED" Refused
            "A chunk-size line that is not hex got 400 or the close, and no answer.";
        HTTP_MALFORMED_CHUNK_EXECUTED "MCP_RES_HTTP_MALFORMED_CHUNK_EXECUTED" Wrong
            "A request with a chunk-size line that is not hex was answered.";
        HTTP_LARGE_EVENT_DELIVERED "MCP_RES_HTTP_LARGE_EVENT_DELIVERED" Holds
            "The echo tool's 256 KiB of fresh text arrived intact in one answer.";
        HTTP_OVERSIZED_BODY_REFUSED "MCP_RES_HTTP_OVERSIZED_BODY_REFUSED" Refused
            "A valid 16 MiB request got 413 or a -32600 error.";
        HTTP_LARGE_EVENT_CORRUPTED "MCP_RES_HTTP_LARGE_EVENT_CORRUPTED" Wrong
            "A large event arrived changed or cut.";
        HTTP_OVERSIZED_BODY_ACCEPTED "MCP_RES_HTTP_OVERSIZED_BODY_ACCEPTED" Wrong
            "A valid 16 MiB request was served.";
        HTTP_SLOW_READ_COMPLETE "MCP_RES_HTTP_SLOW_READ_COMPLETE" Holds
            "1 MiB from the echo tool, read 16 KiB at a time 10 ms apart, arrived intact.";
        HTTP_OTHERS_SERVED_DURING_STALL "MCP_RES_HTTP_OTHERS_SERVED_DURING_STALL" Refused
            "While a 1 MiB answer stayed unread for 1 s, a request on another connection was answered.";
        HTTP_SLOW_READ_CORRUPTED "MCP_RES_HTTP_SLOW_READ_CORRUPTED" Wrong
            "An answer read slowly arrived changed or cut.";
        HTTP_STALL_BLOCKED_OTHERS "MCP_RES_HTTP_STALL_BLOCKED_OTHERS" Wrong
            "While one client stalled reading, the subject served no one else.";
        HTTP_CONCURRENT_ANSWERED "MCP_RES_HTTP_CONCURRENT_ANSWERED" Holds
            "Eight requests at once on eight connections were all answered.";
        HTTP_PIPELINE_ORDERED "MCP_RES_HTTP_PIPELINE_ORDERED" Refused
            "Two requests pipelined on one connection were answered in order, or the second was refused or dropped with the close; never interleaved.";
        HTTP_CONCURRENT_LOST "MCP_RES_HTTP_CONCURRENT_LOST" Wrong
            "One of the concurrent requests was not answered.";
        HTTP_PIPELINE_REORDERED "MCP_RES_HTTP_PIPELINE_REORDERED" Wrong
            "Pipelined requests on one connection were answered out of order.";
        HTTP_PROXY_HEADERS_INERT "MCP_RES_HTTP_PROXY_HEADERS_INERT" Holds
            "A request with Forwarded, X-Forwarded-For, X-Forwarded-Host, X-Forwarded-Proto and Via was answered as usual, with no redirect.";
        HTTP_FOREIGN_HOST_REFUSED "MCP_RES_HTTP_FOREIGN_HOST_REFUSED" Refused
            "A foreign Host (a name drawn per run under .invalid, with the server's own port) was refused (400, 403 or 421).";
        HTTP_REDIRECTED "MCP_RES_HTTP_REDIRECTED" Wrong
            "The subject answered with a redirect.";
        HTTP_PROXY_HEADERS_REFUSED "MCP_RES_HTTP_PROXY_HEADERS_REFUSED" Wrong
            "A request was refused because of headers a proxy adds.";
        HTTP_FOREIGN_HOST_ACCEPTED "MCP_RES_HTTP_FOREIGN_HOST_ACCEPTED" Wrong
            "A request with a foreign Host (a name drawn per run, with the server's own port) was served.";
        HTTP_NO_REDIRECT "MCP_RES_HTTP_NO_REDIRECT" Holds
            "No answer was a redirect.";
        HTTP_FOREIGN_ORIGIN_REFUSED "MCP_RES_HTTP_FOREIGN_ORIGIN_REFUSED" Refused
            "A foreign Origin (a name drawn per run, with the server's own port) got 403 with no Location.";
        HTTP_FOREIGN_ORIGIN_ACCEPTED "MCP_RES_HTTP_FOREIGN_ORIGIN_ACCEPTED" Wrong
            "A request with a foreign Origin (a name drawn per run, with the server's own port) was served.";
        HTTP_LISTENER_LOOPBACK_ONLY "MCP_RES_HTTP_LISTENER_LOOPBACK_ONLY" Holds
            "While serving, every listening socket of the subject was on a loopback address.";
        HTTP_LISTENER_CLOSED_ON_STOP "MCP_RES_HTTP_LISTENER_CLOSED_ON_STOP" Refused
            "Within 2 s of TERM the process had exited and nothing accepted connections on the port.";
        HTTP_LISTENER_LEFT_OPEN "MCP_RES_HTTP_LISTENER_LEFT_OPEN" Wrong
            "After the subject stopped, its listener was still open.";
        HTTP_SIGNAL_IGNORED "MCP_RES_HTTP_SIGNAL_IGNORED" Wrong
            "The subject did not stop on TERM.";
        HTTP_SOCKETS_RELEASED "MCP_RES_HTTP_SOCKETS_RELEASED" Holds
            "Five connections closed by the client left no established socket in the subject within 1 s.";
        HTTP_SOCKETS_CLOSED_ON_STOP "MCP_RES_HTTP_SOCKETS_CLOSED_ON_STOP" Refused
            "TERM with an idle connection open: the process exited within 2 s and the connection was closed.";
        HTTP_SOCKET_LEFT_OPEN "MCP_RES_HTTP_SOCKET_LEFT_OPEN" Wrong
            "After the subject stopped, one of its sockets was still open.";
        HTTP_SOCKETS_HELD "MCP_RES_HTTP_SOCKETS_HELD" Wrong
            "After the clients closed, the subject still held their sockets.";
    }
    /// `mcp-res/operational-resilience/v1`: read from each observation's record of the
    /// declared workload, what was injected and what was measured (`judge::ops`).
    OperationalResilience {
        OPS_START_WITHIN_BUDGET "MCP_RES_OPS_START_WITHIN_BUDGET" Holds
            "The subject answered its opening within the workload's declared start budget (cold-start: the median of the declared fresh starts; warm-start: the second of two starts in a row).";
        OPS_START_OVER_BUDGET "MCP_RES_OPS_START_OVER_BUDGET" Refused
            "The start took longer than the workload's declared budget. It is what the negative control (the subject started behind an injected delay of the budget plus 500 ms) must give; on the positive it is the subject's own start over budget.";
        OPS_SERVED_THROUGH_FLOOD "MCP_RES_OPS_SERVED_THROUGH_FLOOD" Holds
            "Every valid request sent among a flood of malformed lines was answered, as the stored stdout shows.";
        OPS_FLOOD_REFUSED "MCP_RES_OPS_FLOOD_REFUSED" Refused
            "No line of the malformed flood was served (each refused with an error or dropped), and the request after the flood was answered: the subject survived it.";
        OPS_FLOOD_LINE_SERVED "MCP_RES_OPS_FLOOD_LINE_SERVED" Wrong
            "A line of the flood was answered with a result: malformed input was served.";
        OPS_FLOOD_REQUESTS_REFUSED "MCP_RES_OPS_FLOOD_REQUESTS_REFUSED" Wrong
            "Well-formed requests of the flood (the wrong-reason mutant's, for a method no server has) were answered with errors under their own ids: refusals of requests, not of malformed input. It is the reason the mutant must meet.";
        OPS_VALID_REQUEST_UNANSWERED "MCP_RES_OPS_VALID_REQUEST_UNANSWERED" Wrong
            "A valid request sent among or after the flood got no answer while the subject still ran (JSON-RPC 2.0 §4: every request MUST be answered).";
        OPS_RSS_BOUNDED "MCP_RES_OPS_RSS_BOUNDED" Holds
            "Over the second half of the soak after the warm-up, the least-squares slope of the resident memory of the subject's processes per 1,000 answered operations was within the workload's budget, or the growth it fits over those operations was under 4 MiB (the kernel's 2 MiB huge pages make smaller growth indistinguishable from one allocation).";
        OPS_RSS_GROWTH_OVER_BUDGET "MCP_RES_OPS_RSS_GROWTH_OVER_BUDGET" Refused
            "The resident memory grew faster than the workload's budget per 1,000 operations (by the slope over the soak, not one sample). It is what the negative control's injected leak must give.";
        OPS_FDS_GROWTH_OVER_BUDGET "MCP_RES_OPS_FDS_GROWTH_OVER_BUDGET" Refused
            "The resident memory stayed within its budget, but the subject's open files (every descriptor of its process tree) grew faster than the workload's `fdsPer1000Ops` (by the slope over the soak; a growth under two never read as a leak).";
        OPS_CHILDREN_BOUNDED "MCP_RES_OPS_CHILDREN_BOUNDED" Holds
            "Over the second half of the soak after the warm-up, the slope of the subject's live descendants per 1,000 operations was within the workload's budget, or the growth it fits was under two.";
        OPS_CHILDREN_GROWTH_OVER_BUDGET "MCP_RES_OPS_CHILDREN_GROWTH_OVER_BUDGET" Refused
            "The subject's live descendants grew faster than the workload's budget per 1,000 operations. It is what the negative control's injected idle children must give.";
        OPS_LISTENERS_BOUNDED "MCP_RES_OPS_LISTENERS_BOUNDED" Holds
            "Over the second half of the soak after the warm-up, the slope of the subject's listening sockets per 1,000 operations was within the workload's budget, or the growth it fits was under two.";
        OPS_LISTENERS_GROWTH_OVER_BUDGET "MCP_RES_OPS_LISTENERS_GROWTH_OVER_BUDGET" Refused
            "The subject's listening sockets grew faster than the workload's budget per 1,000 operations. It is what the negative control's injected listeners must give.";
        OPS_SOAK_WITHIN_BUDGET "MCP_RES_OPS_SOAK_WITHIN_BUDGET" Holds
            "Over the soak after the warm-up, the p50, p95 and p99 latencies (from each request's intended send time) and the share of requests without a result were within the workload's budgets.";
        OPS_SOAK_OVER_BUDGET "MCP_RES_OPS_SOAK_OVER_BUDGET" Refused
            "A latency percentile or the share of requests without a result was over the workload's budget; the detail names which. It is what the negative control's injected response delay must give.";
        OPS_TOO_FEW_SAMPLES "MCP_RES_OPS_TOO_FEW_SAMPLES" NotObserved
            "The soak left fewer than eight samples in the second half after the warm-up, or no spread in answered operations, or no judged request: no slope or percentile could be read.";
        OPS_GENERATOR_LIMITED "MCP_RES_OPS_GENERATOR_LIMITED" NotObserved
            "The load generator's measured ceiling (against mcpres's null subject) was below twice the workload's rate: a budget miss could be the generator's, so nothing is judged.";
        OPS_INJECTION_NOT_DECLARED "MCP_RES_OPS_INJECTION_NOT_DECLARED" NotObserved
            "The record's injection is not the one the workload declares for that observation (`judge::ops::injection`): it is not judged.";
        OPS_SERVED_THROUGH_OVERSIZED "MCP_RES_OPS_SERVED_THROUGH_OVERSIZED" Holds
            "A well-formed request one line of the workload's oversized size long was answered or dropped without harm, and the request after it was answered.";
        OPS_OVERSIZED_LINE_REFUSED "MCP_RES_OPS_OVERSIZED_LINE_REFUSED" Refused
            "A line of the workload's oversized size that is not JSON was not served (refused with an error or dropped), and the request after it was answered. It is what the negative control must give.";
        OPS_OVERSIZED_LINE_SERVED "MCP_RES_OPS_OVERSIZED_LINE_SERVED" Wrong
            "After an oversized line, a result came for an id mcpres never sent, or for the mutant's request for a method no server has: the line was served.";
        OPS_OVERSIZED_REQUEST_REFUSED "MCP_RES_OPS_OVERSIZED_REQUEST_REFUSED" Wrong
            "The well-formed oversized request for a method no server has (the wrong-reason mutant's) was answered with an error under its own id: a refusal of a request, not of malformed input. It is the reason the mutant must meet.";
        OPS_SHUTDOWN_WITHIN_BUDGET "MCP_RES_OPS_SHUTDOWN_WITHIN_BUDGET" Holds
            "With its stdin closed right after requests were sent, the subject exited by itself (no signal) within the workload's shutdown budget of the close, as the stored events show (how many of those requests it answered is reported in the detail, not judged). Over Streamable HTTP: once its client had ended the session (DELETE, or its connections closed), the subject exited within that budget of SIGTERM.";
        OPS_SHUTDOWN_OVER_BUDGET "MCP_RES_OPS_SHUTDOWN_OVER_BUDGET" Refused
            "The subject exited later than the workload's shutdown budget after its stdin closed (over Streamable HTTP: after SIGTERM, once its session was ended), or not by itself at all (the runner ended it). It is what the negative control (end of file, or over HTTP SIGTERM, held back the budget plus a second) must give.";
        OPS_TERM_WITHIN_BUDGET "MCP_RES_OPS_TERM_WITHIN_BUDGET" Holds
            "Sent SIGTERM with its stdin open, the subject exited within the workload's term budget, as the stored events show.";
        OPS_TERM_OVER_BUDGET "MCP_RES_OPS_TERM_OVER_BUDGET" Refused
            "The subject exited later than the workload's term budget after SIGTERM, or not on SIGTERM at all (the runner killed it). It is what the negative control (SIGTERM passed on the budget plus a second late) must give.";
        OPS_BURST_ANSWERED "MCP_RES_OPS_BURST_ANSWERED" Holds
            "Every request of a burst (the workload's concurrency times its defect factor, sent at once) got an answer, a result or an error (an overload refusal is a bounded outcome), as the stored stdout shows.";
        OPS_BURST_UNANSWERED "MCP_RES_OPS_BURST_UNANSWERED" Refused
            "A request of the burst got no answer while the subject ran (JSON-RPC 2.0 §4: every request MUST be answered): work lost over the concurrency it could take. It is what the negative control (a queue that drops what is over the workload's concurrency) must give.";
        OPS_CLEANUP_COMPLETE "MCP_RES_OPS_CLEANUP_COMPLETE" Holds
            "Once the subject ended, no process of its tree (below it, in its process group, or in its sandbox's PID namespace) was alive.";
        OPS_RESIDUE_LEFT "MCP_RES_OPS_RESIDUE_LEFT" Refused
            "A process of the subject's tree was still alive once the subject ended (found, recorded, then killed by the runner). It is what the negative control's injected orphan must give.";
        OPS_ANSWERED_BY_DEADLINE "MCP_RES_OPS_ANSWERED_BY_DEADLINE" Holds
            "A request, and the request sent after another was cancelled at once (`notifications/cancelled`), were each answered within the workload's request timeout of their send, from the stored times.";
        OPS_DEADLINE_MISSED "MCP_RES_OPS_DEADLINE_MISSED" Refused
            "A judged request got no answer within the workload's request timeout of its send (the client gave up on it and cancelled it: a bounded wait), or its answer came later than that. It is what the negative control (answers held back the timeout plus a second) must give.";
        OPS_DUPLICATE_BOUNDED "MCP_RES_OPS_DUPLICATE_BOUNDED" Holds
            "One request delivered twice (the same line, the same id) was answered at least once, and the request after it was answered; how the duplicate was met (suppressed, replayed, refused) is reported in bounded words, never as exactly-once delivery.";
        OPS_DUPLICATE_STALLED "MCP_RES_OPS_DUPLICATE_STALLED" Refused
            "After one request was delivered twice, the duplicated request or the request after it got no answer while the subject ran (JSON-RPC 2.0 §4: every request MUST be answered). It is what the negative control (a transport that stops passing input on at a duplicate) must give.";
        OPS_CRASH_RECOVERED "MCP_RES_OPS_CRASH_RECOVERED" Holds
            "Killed while serving with a request in flight (SIGKILL to its process group), the subject left nothing of its process tree alive, and a fresh process of it opened and answered a request.";
        OPS_CRASH_RESIDUE "MCP_RES_OPS_CRASH_RESIDUE" Refused
            "A process of the crashed subject's tree outlived the crash (found, recorded, then killed by the runner): the taxonomy's process crash asks for the child reaped. It is what the negative control's injected orphan must give.";
        OPS_RESTART_SAME_SURFACE "MCP_RES_OPS_RESTART_SAME_SURFACE" Holds
            "Ended through its input and started afresh, the subject opened again and declared the same surface (server name, protocol version, capability names, tool names) as before, read from both stored transcripts.";
        OPS_SURFACE_CHANGED "MCP_RES_OPS_SURFACE_CHANGED" Refused
            "After a restart the subject declared another surface than before (server name, protocol version, capability names or tool names): a client that reconnects does not find the server it knew. It is what the negative control (tool names that differ at every start) must give.";
        OPS_OVERLOAD_REJECTED "MCP_RES_OPS_OVERLOAD_REJECTED" Holds
            "With the subject's declared places (the workload's `subject.maxInFlight`) held by its declared hold call, every request sent over them was answered: refused with an error (over Streamable HTTP, a JSON-RPC error or an HTTP error status), or served once a place was free; none lost, none served while every place was held.";
        OPS_OVERLOAD_LOST "MCP_RES_OPS_OVERLOAD_LOST" Refused
            "A request sent over the subject's declared limit got no answer while the subject ran (JSON-RPC 2.0 §4: every request MUST be answered). It is what the negative control (a queue that drops what is over the declared limit) must give.";
        OPS_OVERLOAD_NOT_ENFORCED "MCP_RES_OPS_OVERLOAD_NOT_ENFORCED" Refused
            "With every declared place held, the subject served a request over them with a result: more in flight than the workload declares for it.";
        OPS_HOLD_NOT_HELD "MCP_RES_OPS_HOLD_NOT_HELD" NotObserved
            "A declared hold call was answered before the requests over the limit were all sent (the tool is missing, or holds less than declared; over Streamable HTTP, a hold call refused or answered sooner than the declared hold after its send): the places were not all held, so nothing over them was observed.";
        OPS_OVERLOAD_UNPLACED "MCP_RES_OPS_OVERLOAD_UNPLACED" NotObserved
            "Over Streamable HTTP, where the order in which the subject takes requests on separate connections is not the order they were sent, no request over the declared limit was both sent and answered while every declared hold call was provably running (from the last hold's answer less the declared hold to the first hold's send plus the declared hold, from the stored times): nothing over a full set of places was observed.";
        OPS_RETRY_HONOURED "MCP_RES_OPS_RETRY_HONOURED" Holds
            "Every overload refusal carried a retry hint (`error.data.retryAfterMs`, or `retryAfter` in seconds; over Streamable HTTP the `Retry-After` header in seconds too), and a request retried after the hints got a result.";
        OPS_NO_RETRY_HINT "MCP_RES_OPS_NO_RETRY_HINT" Refused
            "An overload refusal carried no retry hint: a client cannot tell when to come back. It is what the negative control (refusals without a hint) must give.";
        OPS_RETRY_NOT_SERVED "MCP_RES_OPS_RETRY_NOT_SERVED" Refused
            "Retried after every hint until the declared hold calls were over, the request never got a result.";
        OPS_NO_REFUSAL "MCP_RES_OPS_NO_REFUSAL" NotObserved
            "With its declared places held, the subject refused nothing over them (it served them later): there is no retry hint to read.";
        OPS_QUEUE_BOUNDED "MCP_RES_OPS_QUEUE_BOUNDED" Holds
            "The declared limit times the defect factor hold calls, sent at once, were each answered (served or refused), and a request after them got a result (the queue drained).";
        OPS_QUEUE_LOST "MCP_RES_OPS_QUEUE_LOST" Refused
            "A hold call sent over the declared limit got no answer while the subject ran (JSON-RPC 2.0 §4: MUST reply): a saturated queue lost work. It is what the negative control (a queue that drops what is over the declared limit) must give.";
        OPS_QUEUE_NOT_DRAINED "MCP_RES_OPS_QUEUE_NOT_DRAINED" Refused
            "Once the hold calls were answered, the request after them did not get a result: the saturated queue did not drain.";
        OPS_RESTART_FAILED "MCP_RES_OPS_RESTART_FAILED" Refused
            "After the crash, a fresh process of the subject could not start, did not open, or left a request unanswered.";
        OPS_BACKPRESSURE_HELD "MCP_RES_OPS_BACKPRESSURE_HELD" Holds
            "With the runner not reading the subject's output, requests whose answers fill several pipes were sent (over Streamable HTTP: pipelined on one connection, and the subject shown holding answers back when the runner read again); once it read again, every one was answered and a request after them got a result. Whether the subject held back (requests left unread) or buffered is reported, not judged.";
        OPS_BACKPRESSURE_LOST "MCP_RES_OPS_BACKPRESSURE_LOST" Refused
            "A request sent while the runner did not read the subject's output got no answer once it read again, while the subject ran (JSON-RPC 2.0 §4: every request MUST be answered). It is what the negative control (a transport that drops output the runner's full pipe does not take) must give.";
        OPS_BACKPRESSURE_NOT_REACHED "MCP_RES_OPS_BACKPRESSURE_NOT_REACHED" NotObserved
            "Every request was answered, but the stored answers came to less than two pipes' worth (refusals, or answers smaller than their first one): the runner's pipe never filled, so no backpressure was exercised. Over Streamable HTTP: the subject was still writing when the runner read again, or its answers all fit in the kernel's queues then (it never waited), or it ended the pipelined connection cleanly (a server may; the client retries).";
        OPS_BACKPRESSURE_STALLED "MCP_RES_OPS_BACKPRESSURE_STALLED" Refused
            "Once the held output was read, the request after it got no result: the subject did not recover from its output being held.";
        OPS_RATE_LIMIT_HELD "MCP_RES_OPS_RATE_LIMIT_HELD" Holds
            "A burst of the declared rate limit times the defect factor (the workload's `rateLimit`), sent a window after the opening in rounds of the workload's concurrency, was answered in full: at least the declared requests served, no more than twice them within one window, the rest refused with an error or served in a later window; and a request a window after the burst got a result.";
        OPS_RATE_LIMIT_LOST "MCP_RES_OPS_RATE_LIMIT_LOST" Refused
            "A request of the burst sent over the declared rate limit got no answer while the subject ran (JSON-RPC 2.0 §4: every request MUST be answered). It is what the negative control (a rate limit at the transport that drops what is over it) must give.";
        OPS_RATE_NOT_ENFORCED "MCP_RES_OPS_RATE_NOT_ENFORCED" Refused
            "More than twice the declared requests were served with a result within one window of the burst's first send (times from the stored chunks): the declared rate limit was not kept (a fixed window's boundary may let two windows' worth through, never more).";
        OPS_RATE_UNDER_DECLARED "MCP_RES_OPS_RATE_UNDER_DECLARED" Refused
            "The subject refused requests of the burst before it had served the declared number of them in the window: its limit is stricter than the workload declares.";
        OPS_RATE_LIMIT_STUCK "MCP_RES_OPS_RATE_LIMIT_STUCK" Refused
            "A request sent a full window after the burst's last answer was refused or not answered: the rate limit did not release.";
        OPS_STORAGE_FAILURE_REPORTED "MCP_RES_OPS_STORAGE_FAILURE_REPORTED" Holds
            "With the declared storage made full (no room, no inode) or read-only in the subject's sandbox, the declared write was answered as failed (an error, or a result with isError), and a request after it got a result: the failure reported, no write claimed, the subject still serving.";
        OPS_STORAGE_WRITE_CLAIMED "MCP_RES_OPS_STORAGE_WRITE_CLAIMED" Refused
            "With the declared storage full or read-only, the declared write was answered as a success: a write the storage could not hold was claimed (the taxonomy's forbidden partial-artifact claim). It is what the negative control (a transport that answers the write tool with a success) must give.";
        OPS_STORAGE_WRITE_UNANSWERED "MCP_RES_OPS_STORAGE_WRITE_UNANSWERED" Refused
            "With the declared storage full or read-only, the declared write got no answer while the subject ran (JSON-RPC 2.0 §4: every request MUST be answered).";
        OPS_STORAGE_STOPPED_SERVING "MCP_RES_OPS_STORAGE_STOPPED_SERVING" Refused
            "After the failed write, a request got no result while the subject ran: a storage failure stopped the subject serving.";
        OPS_STORAGE_WRITE_SERVED "MCP_RES_OPS_STORAGE_WRITE_SERVED" Holds
            "With the storage left as it is (no fault), the declared write was answered as a success: what the write does when it can. The mutant's reading, and the baseline the positive needs.";
        OPS_STORAGE_WRITE_FAILED "MCP_RES_OPS_STORAGE_WRITE_FAILED" NotObserved
            "With no fault injected, the declared write failed (or got no answer): the declaration does not name a write that works, so a failure under the fault says nothing about it.";
        OPS_STORAGE_FAULT_NOT_INJECTED "MCP_RES_OPS_STORAGE_FAULT_NOT_INJECTED" NotObserved
            "The record's sandbox does not show the storage fault injected (no sandbox, or the mount failed): nothing was observed under it.";
        OPS_RATE_NOT_REACHED "MCP_RES_OPS_RATE_NOT_REACHED" NotObserved
            "The whole burst was served, over more than one window: the subject was too slow for the burst to reach the declared limit, so the limit was not observed.";
        OPS_DOWNSTREAM_FAILURE_REPORTED "MCP_RES_OPS_DOWNSTREAM_FAILURE_REPORTED" Holds
            "With the declared downstream answering 503 to every request (the taxonomy's dependency-failure), each declared call was answered as failed (an error, or a result with isError) and a request after them got a result: a bounded dependency error, no false success, the subject still serving.";
        OPS_DOWNSTREAM_FALSE_SUCCESS "MCP_RES_OPS_DOWNSTREAM_FALSE_SUCCESS" Refused
            "With the declared downstream unavailable, a declared call that reached it was answered as a success: the taxonomy's forbidden false success. It is what the negative control (a transport that answers the call with a success) must give.";
        OPS_DOWNSTREAM_CALL_UNANSWERED "MCP_RES_OPS_DOWNSTREAM_CALL_UNANSWERED" Refused
            "With the declared downstream unavailable, a declared call got no answer while the subject ran (JSON-RPC 2.0 §4: every request MUST be answered).";
        OPS_DOWNSTREAM_STOPPED_SERVING "MCP_RES_OPS_DOWNSTREAM_STOPPED_SERVING" Refused
            "With the declared downstream unavailable, a request that does not need it got no result while the subject ran: a dependency failure stopped the whole subject serving.";
        OPS_DOWNSTREAM_CALL_SERVED "MCP_RES_OPS_DOWNSTREAM_CALL_SERVED" Holds
            "With the declared downstream answering (at once, or 75 ms late: the taxonomy's delayed-response), the declared calls reached it and were answered as successes. The mutant's reading of downstream-failure.";
        OPS_DOWNSTREAM_CALL_FAILED "MCP_RES_OPS_DOWNSTREAM_CALL_FAILED" NotObserved
            "With the declared downstream answering, the declared call failed (or got no answer): the declaration does not name a call that works, so a failure with the downstream down says nothing about it.";
        OPS_DOWNSTREAM_NOT_CALLED "MCP_RES_OPS_DOWNSTREAM_NOT_CALLED" NotObserved
            "The stored stub log shows no request from the subject during the declared call: the call does not reach the declared downstream (or not through the declared environment variable), so its answers say nothing about the downstream.";
        OPS_OUTAGE_RECOVERED "MCP_RES_OPS_OUTAGE_RECOVERED" Holds
            "Through an outage of the declared downstream within one session, the declared call succeeded before it, was answered as failed during it while a request that does not need it got a result, and succeeded again within the declared recovery time once the downstream was back.";
        OPS_SKEW_COMPATIBLE "MCP_RES_OPS_SKEW_COMPATIBLE" Holds
            "With the subject's declared other version started beside it (a rolling update), the other version opened with the protocol revision the running one negotiated and listed every tool the running one listed (tools added allowed), and the running version went on serving.";
        OPS_SKEW_TOOL_REMOVED "MCP_RES_OPS_SKEW_TOOL_REMOVED" Refused
            "The declared other version does not list a tool the running version listed: a client that learned the surface on one version finds a tool gone on the other during the update. It is what the negative control (a transport that leaves the first tool out of the other version's list) must give.";
        OPS_SKEW_REVISION_DROPPED "MCP_RES_OPS_SKEW_REVISION_DROPPED" Refused
            "The declared other version did not agree to the protocol revision the running version negotiated with the same client: a client moved between them mid-update cannot go on speaking it.";
        OPS_SKEW_OTHER_FAILED "MCP_RES_OPS_SKEW_OTHER_FAILED" Refused
            "The declared other version could not start, open or list its tools beside the running version (a lock, a port or a file the two cannot share): the two versions cannot run at once.";
        OPS_SKEW_RUNNING_STOPPED "MCP_RES_OPS_SKEW_RUNNING_STOPPED" Refused
            "With the declared other version started beside it, the running version got no result for a request: starting the other version stopped the running one serving.";
        OPS_SKEW_NOT_STARTED "MCP_RES_OPS_SKEW_NOT_STARTED" NotObserved
            "The declared other version's command names no program mcpres can start (not found, or not executable): a declaration to fix, not an observation.";
        OPS_SKEW_OTHER_SERVER "MCP_RES_OPS_SKEW_OTHER_SERVER" NotObserved
            "The declared other version names itself another server than the running one: not a version of the same subject, so nothing about skew between versions is observed.";
        OPS_SKEW_NO_TOOLS "MCP_RES_OPS_SKEW_NO_TOOLS" NotObserved
            "The running version lists no tools: no surface a client learned from it to look for on the other version.";
        OPS_OUTAGE_NOT_RECOVERED "MCP_RES_OPS_OUTAGE_NOT_RECOVERED" Refused
            "Once the declared downstream was back, the declared call did not succeed within the declared recovery time: the subject kept failing after the outage (a failure cached, a breaker that does not close). It is what the negative control (a transport that repeats the first failure for ever) must give.";
    }
    /// `mcp-res/cache-behavior/v1`: each read from its observation's record by
    /// `src/judge/cache.rs`.
    CacheBehavior {
        CACHE_TTL_PRESENT "MCP_RES_CACHE_TTL_PRESENT" Holds
            "Every result of a cacheable method the subject answered (`server/discover`, the lists, `resources/read`) carries `ttlMs`, an integer of zero or more, as the 2026-07-28 schema requires.";
        CACHE_TTL_INVALID "MCP_RES_CACHE_TTL_INVALID" Refused
            "A result of a cacheable method carries no `ttlMs`, or one that is not an integer of zero or more: the 2026-07-28 schema requires it. It is what the negative control (a transport that strips `ttlMs` from the answers) must give.";
        CACHE_SCOPE_PRESENT "MCP_RES_CACHE_SCOPE_PRESENT" Holds
            "Every result of a cacheable method the subject answered carries `cacheScope`, `public` or `private`, as the 2026-07-28 schema requires.";
        CACHE_SCOPE_INVALID "MCP_RES_CACHE_SCOPE_INVALID" Refused
            "A result of a cacheable method carries no `cacheScope`, or a value other than `public` and `private`. It is what the negative control (a transport that writes `shared`) must give.";
        CACHE_KEY_IDENTITY_HELD "MCP_RES_CACHE_KEY_IDENTITY_HELD" Holds
            "Each `resources/read` answer names, in every item of its contents, the URI that was asked for, for two different listed resources and for the first one read again: an entry keyed by method and URI holds that URI's data.";
        CACHE_KEY_MIXED "MCP_RES_CACHE_KEY_MIXED" Refused
            "A `resources/read` answer carries contents of another URI than the one asked for (a cache keyed by the method alone served another key's entry). It is what the negative control (a transport cache keyed by the method alone) must give.";
        CACHE_REVISION_KEYED "MCP_RES_CACHE_REVISION_KEYED" Holds
            "A `tools/list` naming a protocol version the subject does not implement was refused with an error, not answered with a result: nothing served under one revision is served for another.";
        CACHE_REVISION_NOT_KEYED "MCP_RES_CACHE_REVISION_NOT_KEYED" Refused
            "A `tools/list` naming a protocol version no revision has got a result: an answer was served across revisions, where 2026-07-28 requires UnsupportedProtocolVersionError. It is what the negative control (a transport cache keyed without the revision) must give.";
        CACHE_VERSION_CONSISTENT "MCP_RES_CACHE_VERSION_CONSISTENT" Holds
            "Every cacheable result that names the server that produced it (`_meta` `io.modelcontextprotocol/serverInfo`) names the same name and version: entries a cache keys by the subject's version are keyed alike.";
        CACHE_VERSION_KEY_MISMATCH "MCP_RES_CACHE_VERSION_KEY_MISMATCH" Refused
            "Cacheable results of one process name different server versions (or names) in their `io.modelcontextprotocol/serverInfo` stamps: an entry from another version is served as this one's. It is what the negative control (a transport that stamps the lists with version `0.0.0-stale`, the taxonomy's cache-stale-poisoned) must give.";
        CACHE_TENANTS_SEPARATED "MCP_RES_CACHE_TENANTS_SEPARATED" Holds
            "Results scoped `private` were not served across two authorization contexts. Reserved: no runner observes it yet (it needs two authorization contexts, which a stdio run does not have).";
        CACHE_TENANT_SHARED "MCP_RES_CACHE_TENANT_SHARED" Refused
            "A result scoped `private` for one authorization context was served to another. Reserved: no runner observes it yet.";
        CACHE_FRESH_HELD "MCP_RES_CACHE_FRESH_HELD" Holds
            "The tool list, asked for twice within the freshness its first answer hinted (`ttlMs` over zero), came back with the same tools, or changed only after a `notifications/tools/list_changed` or once its `ttlMs` had passed.";
        CACHE_STALE_WITHIN_TTL "MCP_RES_CACHE_STALE_WITHIN_TTL" Refused
            "The tool list changed within the freshness its first answer hinted, with no `notifications/tools/list_changed` between: a client that kept the first answer as fresh, as the hint allows, served a stale list. It is what the negative control (a transport that adds a tool to the second listing) must give.";
        CACHE_EXPIRY_HONOURED "MCP_RES_CACHE_EXPIRY_HONOURED" Holds
            "An entry was not served as fresh once its `ttlMs` had passed. Reserved: no runner observes it yet (the expiry of an entry is a cache's behaviour, and mcpres drives servers).";
        CACHE_EXPIRED_SERVED "MCP_RES_CACHE_EXPIRED_SERVED" Refused
            "An entry was served as fresh after its `ttlMs` had passed. Reserved: no runner observes it yet.";
        CACHE_LISTED_READABLE "MCP_RES_CACHE_LISTED_READABLE" Holds
            "The resources `resources/list` listed (in a result a client may cache) that were read were each served by `resources/read` with a result.";
        CACHE_LISTED_NOT_READABLE "MCP_RES_CACHE_LISTED_NOT_READABLE" Refused
            "A resource `resources/list` listed was refused by `resources/read` in the same process: the cached list and the reads disagree. It is what the negative control (a transport that answers the second resource's read as not found) must give.";
        CACHE_ABSENT_NOT_CACHED "MCP_RES_CACHE_ABSENT_NOT_CACHED" Holds
            "A `resources/read` of a URI no server has was refused with an error, or answered with a result hinted immediately stale (`ttlMs` 0): nothing a cache would keep as the resource's content.";
        CACHE_ABSENT_CACHED "MCP_RES_CACHE_ABSENT_CACHED" Refused
            "A `resources/read` of a URI no server has was answered with a result hinted fresh (`ttlMs` over zero): a cache keeps the absence as content. It is what the negative control (a transport that turns the error into an empty result fresh for a day) must give.";
        CACHE_POISON_CONTAINED "MCP_RES_CACHE_POISON_CONTAINED" Holds
            "What a `resources/read` with an attacker-chosen key (the first resource's URI with a fragment added) got was not served for the first resource's own URI, read again afterwards.";
        CACHE_POISONED "MCP_RES_CACHE_POISONED" Refused
            "The first resource's URI, read again after a read of it with a fragment added, was served what the fragment's read got (and not what it got first): a cache stored an attacker-chosen key's answer under another key. It is what the negative control (a transport cache that stores the fragment's answer under the bare URI) must give.";
        CACHE_INVALIDATION_ANNOUNCED "MCP_RES_CACHE_INVALIDATION_ANNOUNCED" Holds
            "A list a cache may hold changed only after the subject announced it (`notifications/*/list_changed`). Reserved: no runner observes it yet (it needs a subject whose capabilities change during the run).";
        CACHE_CHANGE_UNANNOUNCED "MCP_RES_CACHE_CHANGE_UNANNOUNCED" Refused
            "A list a cache may hold changed without an announcement. Reserved: no runner observes it yet.";
        CACHE_PERSONAL_NOT_PUBLIC "MCP_RES_CACHE_PERSONAL_NOT_PUBLIC" Holds
            "No result scoped `public` carries the caller's own identifying data (the client name each request of the run carried in `_meta`, drawn afresh for the run): what is marked shareable across authorization contexts holds nothing of the caller's.";
        CACHE_PERSONAL_PUBLIC "MCP_RES_CACHE_PERSONAL_PUBLIC" Refused
            "A result scoped `public` carries the caller's own identifying data (the client name its request carried): 2026-07-28 defines `public` as a response without user-specific data, which any cache may share across authorization contexts. It is what the negative control (a transport that writes the caller's name into the tool list and keeps it public) must give.";
        CACHE_INJECTION_NOT_DECLARED "MCP_RES_CACHE_INJECTION_NOT_DECLARED" NotObserved
            "The record's injection is not the one `judge::cache::injection` gives that check's observation: it is not judged.";
        CACHE_NO_RESOURCES "MCP_RES_CACHE_NO_RESOURCES" NotObserved
            "The subject declares no resources, or lists fewer than the check reads (two for cache-key-identity, one otherwise): nothing to read.";
        CACHE_READ_FAILED "MCP_RES_CACHE_READ_FAILED" NotObserved
            "A resource the check reads was not served with a result (refused, silent, or the subject gone): list-resource-consistency judges that; this check has nothing to compare.";
        CACHE_NO_VERSION_STAMP "MCP_RES_CACHE_NO_VERSION_STAMP" NotObserved
            "No cacheable result names the server that produced it (`io.modelcontextprotocol/serverInfo` in `_meta`, which 2026-07-28 asks for with a SHOULD): nothing a cache could key by the subject's version.";
        CACHE_NOTHING_FRESH "MCP_RES_CACHE_NOTHING_FRESH" NotObserved
            "The subject declares no tools, or its tool list is hinted immediately stale (`ttlMs` 0): nothing was promised fresh, so no change of it can be stale.";
        CACHE_NOTHING_PUBLIC "MCP_RES_CACHE_NOTHING_PUBLIC" NotObserved
            "No result of the conversation is scoped `public`: nothing is marked shareable across authorization contexts, so nothing of the caller's could be shared by the scope.";
        CACHE_NOT_OBSERVABLE_ON_STDIO "MCP_RES_CACHE_NOT_OBSERVABLE_ON_STDIO" NotObserved
            "The check needs what a stdio run against a server does not have: two authorization contexts (user-tenant-separation), a cache of the client's own to expire (expiry), or a subject whose capabilities change during the run (capability-change-invalidation). Not observed, never a PASS.";
    }
    /// `mcp-res/oauth-boundary/v1`: the runner's own codes, then per check its ACCEPTED and
    /// REJECTED pair (`MCP_RES_OAUTH_<CHECK>_<BRANCH>`, in manifest order).
    OauthBoundary {
        OAUTH_EARLY_SYNTAX_REJECTION "MCP_RES_OAUTH_EARLY_SYNTAX_REJECTION" Wrong
            "The request was refused as malformed (a malformed token, URL or request) before the property was judged. It is the reason every OAuth wrong-reason mutant must meet.";
        OAUTH_OTHER_REFUSAL "MCP_RES_OAUTH_OTHER_REFUSAL" Wrong
            "The subject (or the fixture, or the runner) answered or refused for a reason that is neither the check's own nor the syntax guard; the observation's detail names the reason given.";
        OAUTH_NO_ANSWER "MCP_RES_OAUTH_NO_ANSWER" NotObserved
            "Nothing came back: no HTTP answer, or no flow to judge.";
        OAUTH_TOKEN_FORWARDED "MCP_RES_OAUTH_TOKEN_FORWARDED" Wrong
            "The subject forwarded the client's token to another server (the fixture's audit shows the passthrough request).";
        OAUTH_TOKEN_STORED "MCP_RES_OAUTH_TOKEN_STORED" Wrong
            "The subject's stdout or stderr held the bytes of a token it was given.";
        OAUTH_ERROR_ECHOES_TOKEN "MCP_RES_OAUTH_ERROR_ECHOES_TOKEN" Wrong
            "An authorization error answer held the presented token.";
        OAUTH_ERROR_ECHOES_CLAIM "MCP_RES_OAUTH_ERROR_ECHOES_CLAIM" Wrong
            "An authorization error answer held a claim of the presented token.";
        OAUTH_PROTECTED_RESOURCE_METADATA_DISCOVERY_ACCEPTED "MCP_RES_OAUTH_PROTECTED_RESOURCE_METADATA_DISCOVERY_ACCEPTED" Holds
            "The protected resource metadata named the resource and only the run's issuer.";
        OAUTH_PROTECTED_RESOURCE_METADATA_DISCOVERY_REJECTED "MCP_RES_OAUTH_PROTECTED_RESOURCE_METADATA_DISCOVERY_REJECTED" Refused
            "A request without a token was refused with 401 and a challenge whose resource_metadata points at the metadata.";
        OAUTH_AUTHORIZATION_SERVER_METADATA_ACCEPTED "MCP_RES_OAUTH_AUTHORIZATION_SERVER_METADATA_ACCEPTED" Holds
            "Every authorization server the metadata names is a loopback address whose own metadata names it as issuer.";
        OAUTH_AUTHORIZATION_SERVER_METADATA_REJECTED "MCP_RES_OAUTH_AUTHORIZATION_SERVER_METADATA_REJECTED" Refused
            "Authorization server metadata whose issuer is another server was refused.";
        OAUTH_ISSUER_BINDING_ACCEPTED "MCP_RES_OAUTH_ISSUER_BINDING_ACCEPTED" Holds
            "A token from the run's issuer was accepted.";
        OAUTH_ISSUER_BINDING_REJECTED "MCP_RES_OAUTH_ISSUER_BINDING_REJECTED" Refused
            "A token naming another issuer was refused as wrong-issuer.";
        OAUTH_AUTHORIZATION_REQUEST_RESOURCE_ACCEPTED "MCP_RES_OAUTH_AUTHORIZATION_REQUEST_RESOURCE_ACCEPTED" Holds
            "An authorization request naming the resource was granted.";
        OAUTH_AUTHORIZATION_REQUEST_RESOURCE_REJECTED "MCP_RES_OAUTH_AUTHORIZATION_REQUEST_RESOURCE_REJECTED" Refused
            "An authorization request without a resource was refused (invalid_target).";
        OAUTH_TOKEN_REQUEST_RESOURCE_ACCEPTED "MCP_RES_OAUTH_TOKEN_REQUEST_RESOURCE_ACCEPTED" Holds
            "A code redeemed for its resource gave a token for that audience.";
        OAUTH_TOKEN_REQUEST_RESOURCE_REJECTED "MCP_RES_OAUTH_TOKEN_REQUEST_RESOURCE_REJECTED" Refused
            "A code redeemed for another resource was refused (invalid_target).";
        OAUTH_ACCESS_TOKEN_AUDIENCE_ACCEPTED "MCP_RES_OAUTH_ACCESS_TOKEN_AUDIENCE_ACCEPTED" Holds
            "A token for the subject's audience was accepted.";
        OAUTH_ACCESS_TOKEN_AUDIENCE_REJECTED "MCP_RES_OAUTH_ACCESS_TOKEN_AUDIENCE_REJECTED" Refused
            "A token for another audience was refused as wrong-audience.";
        OAUTH_WRONG_RESOURCE_TOKEN_REJECTION_ACCEPTED "MCP_RES_OAUTH_WRONG_RESOURCE_TOKEN_REJECTION_ACCEPTED" Holds
            "A token from a real grant for the subject was accepted.";
        OAUTH_WRONG_RESOURCE_TOKEN_REJECTION_REJECTED "MCP_RES_OAUTH_WRONG_RESOURCE_TOKEN_REJECTION_REJECTED" Refused
            "A token from a real grant for another resource was refused as wrong-audience.";
        OAUTH_TOKEN_PASSTHROUGH_PROHIBITED_ACCEPTED "MCP_RES_OAUTH_TOKEN_PASSTHROUGH_PROHIBITED_ACCEPTED" Holds
            "A valid token was accepted and not forwarded to any other server.";
        OAUTH_TOKEN_PASSTHROUGH_PROHIBITED_REJECTED "MCP_RES_OAUTH_TOKEN_PASSTHROUGH_PROHIBITED_REJECTED" Refused
            "An expired token was refused as expired and not forwarded.";
        OAUTH_PKCE_S256_ACCEPTED "MCP_RES_OAUTH_PKCE_S256_ACCEPTED" Holds
            "A code was redeemed with its S256 verifier.";
        OAUTH_PKCE_S256_REJECTED "MCP_RES_OAUTH_PKCE_S256_REJECTED" Refused
            "A code redeemed with another verifier was refused (invalid_grant).";
        OAUTH_PKCE_DOWNGRADE_REFUSED_ACCEPTED "MCP_RES_OAUTH_PKCE_DOWNGRADE_REFUSED_ACCEPTED" Holds
            "An authorization request with PKCE method S256 was granted.";
        OAUTH_PKCE_DOWNGRADE_REFUSED_REJECTED "MCP_RES_OAUTH_PKCE_DOWNGRADE_REFUSED_REJECTED" Refused
            "An authorization request with PKCE method plain was refused.";
        OAUTH_EXACT_REDIRECT_URI_ACCEPTED "MCP_RES_OAUTH_EXACT_REDIRECT_URI_ACCEPTED" Holds
            "An authorization request with the registered redirect URI was granted.";
        OAUTH_EXACT_REDIRECT_URI_REJECTED "MCP_RES_OAUTH_EXACT_REDIRECT_URI_REJECTED" Refused
            "An authorization request with a redirect URI that only starts with the registered one was refused.";
        OAUTH_STATE_BINDING_ACCEPTED "MCP_RES_OAUTH_STATE_BINDING_ACCEPTED" Holds
            "A granted request got its state back byte for byte.";
        OAUTH_STATE_BINDING_REJECTED "MCP_RES_OAUTH_STATE_BINDING_REJECTED" Refused
            "An authorization request without state was refused.";
        OAUTH_MIX_UP_RESISTANCE_ACCEPTED "MCP_RES_OAUTH_MIX_UP_RESISTANCE_ACCEPTED" Holds
            "The authorization response named the issuer that was asked, with a code.";
        OAUTH_MIX_UP_RESISTANCE_REJECTED "MCP_RES_OAUTH_MIX_UP_RESISTANCE_REJECTED" Refused
            "An authorization response naming another issuer was refused.";
        OAUTH_AUTHORIZATION_CODE_BINDING_ACCEPTED "MCP_RES_OAUTH_AUTHORIZATION_CODE_BINDING_ACCEPTED" Holds
            "A code was redeemed by the client it was issued to.";
        OAUTH_AUTHORIZATION_CODE_BINDING_REJECTED "MCP_RES_OAUTH_AUTHORIZATION_CODE_BINDING_REJECTED" Refused
            "A code redeemed under another client's id was refused (invalid_grant).";
        OAUTH_TOKEN_ENDPOINT_IDENTITY_ACCEPTED "MCP_RES_OAUTH_TOKEN_ENDPOINT_IDENTITY_ACCEPTED" Holds
            "The token endpoint is on the issuer's origin.";
        OAUTH_TOKEN_ENDPOINT_IDENTITY_REJECTED "MCP_RES_OAUTH_TOKEN_ENDPOINT_IDENTITY_REJECTED" Refused
            "A token endpoint off the issuer's origin was refused before any connection.";
        OAUTH_CIMD_IDENTITY_ACCEPTED "MCP_RES_OAUTH_CIMD_IDENTITY_ACCEPTED" Holds
            "The run's client, identified by its client ID metadata document, was granted.";
        OAUTH_CIMD_IDENTITY_REJECTED "MCP_RES_OAUTH_CIMD_IDENTITY_REJECTED" Refused
            "A client whose metadata document names another client id was refused.";
        OAUTH_CIMD_TRUST_POLICY_RECORDED_ACCEPTED "MCP_RES_OAUTH_CIMD_TRUST_POLICY_RECORDED_ACCEPTED" Holds
            "The client's metadata document was fetched and the trust policy applied to it was recorded.";
        OAUTH_CIMD_TRUST_POLICY_RECORDED_REJECTED "MCP_RES_OAUTH_CIMD_TRUST_POLICY_RECORDED_REJECTED" Refused
            "A client the trust policy does not admit was refused, and the refusal recorded.";
        OAUTH_SCOPE_MINIMIZATION_ACCEPTED "MCP_RES_OAUTH_SCOPE_MINIMIZATION_ACCEPTED" Holds
            "A grant asked for exactly the required scope, got exactly it, and its token was accepted.";
        OAUTH_SCOPE_MINIMIZATION_REJECTED "MCP_RES_OAUTH_SCOPE_MINIMIZATION_REJECTED" Refused
            "A token carrying another scope was refused with 403 and an insufficient_scope challenge.";
        OAUTH_TOKEN_STORAGE_OMISSION_ACCEPTED "MCP_RES_OAUTH_TOKEN_STORAGE_OMISSION_ACCEPTED" Holds
            "A token was accepted and the subject's output holds none of its bytes.";
        OAUTH_TOKEN_STORAGE_OMISSION_REJECTED "MCP_RES_OAUTH_TOKEN_STORAGE_OMISSION_REJECTED" Refused
            "An expired token was refused and the subject's output holds none of its bytes.";
        OAUTH_SANITIZED_AUTHORIZATION_ERRORS_ACCEPTED "MCP_RES_OAUTH_SANITIZED_AUTHORIZATION_ERRORS_ACCEPTED" Holds
            "A valid token was accepted.";
        OAUTH_SANITIZED_AUTHORIZATION_ERRORS_REJECTED "MCP_RES_OAUTH_SANITIZED_AUTHORIZATION_ERRORS_REJECTED" Refused
            "A token for another audience was refused with an error that holds neither the token nor its claims.";
        OAUTH_BOUNDED_REDIRECTS_ACCEPTED "MCP_RES_OAUTH_BOUNDED_REDIRECTS_ACCEPTED" Holds
            "The metadata was fetched without following a redirect.";
        OAUTH_BOUNDED_REDIRECTS_REJECTED "MCP_RES_OAUTH_BOUNDED_REDIRECTS_REJECTED" Refused
            "A redirect while fetching metadata was refused, not followed.";
        OAUTH_SSRF_RESISTANT_METADATA_RESOLUTION_ACCEPTED "MCP_RES_OAUTH_SSRF_RESISTANT_METADATA_RESOLUTION_ACCEPTED" Holds
            "Every authorization server in the metadata is on loopback and was fetched.";
        OAUTH_SSRF_RESISTANT_METADATA_RESOLUTION_REJECTED "MCP_RES_OAUTH_SSRF_RESISTANT_METADATA_RESOLUTION_REJECTED" Refused
            "A metadata URL off loopback was refused with no connection attempt.";
        OAUTH_LOOPBACK_REDIRECT_COLLISION_ACCEPTED "MCP_RES_OAUTH_LOOPBACK_REDIRECT_COLLISION_ACCEPTED" Holds
            "The code was delivered to the client's own loopback listener, which was released afterwards.";
        OAUTH_LOOPBACK_REDIRECT_COLLISION_REJECTED "MCP_RES_OAUTH_LOOPBACK_REDIRECT_COLLISION_REJECTED" Refused
            "A redirect to a loopback port the client does not own was refused.";
        OAUTH_PROXY_CONSENT_CLIENT_BINDING_ACCEPTED "MCP_RES_OAUTH_PROXY_CONSENT_CLIENT_BINDING_ACCEPTED" Holds
            "A consent given for this client was honoured.";
        OAUTH_PROXY_CONSENT_CLIENT_BINDING_REJECTED "MCP_RES_OAUTH_PROXY_CONSENT_CLIENT_BINDING_REJECTED" Refused
            "A consent given for another client was not reused for this one.";
        OAUTH_REFRESH_TOKEN_ROTATION_WHEN_CLAIMED_ACCEPTED "MCP_RES_OAUTH_REFRESH_TOKEN_ROTATION_WHEN_CLAIMED_ACCEPTED" Holds
            "A refresh gave a new, different refresh token.";
        OAUTH_REFRESH_TOKEN_ROTATION_WHEN_CLAIMED_REJECTED "MCP_RES_OAUTH_REFRESH_TOKEN_ROTATION_WHEN_CLAIMED_REJECTED" Refused
            "A used refresh token was refused (invalid_grant) and its successor revoked with it.";
    }
}
