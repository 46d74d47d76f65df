// Package readmetest runs the marked shell blocks of README.md and of the
// docs pages in one pass, as written, on a fresh copy of the checkout
// (TestReadmeInOrder), and checks the docs tree (TestDocsTree). It has no
// code of its own: only the tests.
//
// The walk runs README.md's blocks, then docs/README.md's (the index), then
// each docs page's in the order the index first links it, sharing what
// servers printed (captures) and the servers themselves: a page may stop or
// use a server an earlier page started. Progress lines and failures name
// the block as FILE:LINE. The index must link every page of docs/.
//
// A block runs when the HTML comment right before its fence says how:
//
//	<!-- readme-test: run [OPTION]... -->      a command block: must exit 0
//	<!-- readme-test: serve NAME [OPTION]... --> a server: started in the
//	                                             background (its own process
//	                                             group) and left running
//	<!-- readme-test: stop NAME -->             Ctrl-C (SIGINT) to a server
//
// Options (a value with spaces in double quotes; \" and \\ escape):
//
//	ready="RE"        serve: started once its output matches RE
//	ports=P,P         serve: the loopback ports it listens on, which must be
//	                  free first (the README's defaults: no other pactd or
//	                  demo may run on this machine meanwhile)
//	capture="VAR=RE"  serve: once ready, VAR is RE's first group in its output
//	set=VAR,VAR       the block's own VAR=… assignments get the test's value
//	                  of VAR: what a reader types instead of the page's "…"
//	                  (a captured value, a fresh PostgreSQL database for
//	                  PACT_DATABASE_URL, fresh tokens otherwise)
//	env=VAR,VAR       VAR is exported before the block, as the page tells
//	                  the reader to ("ISS is the printed PA issuer")
//	paste=VAR         the captured VAR, a shell line a server printed for
//	                  the reader to paste, runs first ("paste the export …
//	                  line the demo prints")
//	expect="TEXT"     the output holds TEXT (several: in this order)
//	engines=E,E       run once per container engine: podman (the installed
//	                  one; the image it builds, the page's tag, is removed
//	                  afterwards) and docker (a stand-in that parses docker
//	                  build's flags as docker does, since no docker is
//	                  installed)
//
// A block that prints a device grant's link and code ("Open: …", "Code: …")
// waits for the User; the test plays the User's browser as the block's
// instruction comment says ("open the printed link, sign in with any name,
// uncheck "Cancel…", check the code matches, Allow"): it fetches the pages and
// submits their forms, and fails on an instruction it does not know.
package readmetest
