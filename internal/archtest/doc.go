// Package archtest holds the repository's guard tests and nothing else: the
// dependency rule between package ranks (classify: generated code, leaf
// helpers, the token/JOSE core, the HDTP core, db, core, services, server
// and the frontends, cmd, and the lab in bench/; an import only points to a
// lower rank, with no allowed same-rank edge and no exception), the test kit
// imported by tests only, no SQL and no database driver outside db/, and
// every fuzz target in the fuzz run of scripts/test.sh. The lab is a module
// of its own (bench/go.mod); the guards read it with the main module, and
// refuse any other nested module with Go code. Each guard also checks that
// it read enough files, so a broken walk cannot pass by checking nothing.
//
// Whether generated code was edited by hand cannot be seen in the source; the
// regenerate-and-diff step of scripts/test.sh holds that rule.
package archtest
