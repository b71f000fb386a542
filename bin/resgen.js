#!/usr/bin/env node
import { main } from "../dist/src/cli/cli.js";

// A reader that has gone (`resgen explain … | head`) closes the pipe: what is left to print has
// nobody to read it, so it is dropped, and the command still finishes its work and exits with
// its own code, never with a stack trace.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (error) => {
    if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
  });

process.exitCode = await main(process.argv);
