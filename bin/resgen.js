#!/usr/bin/env node
import { main } from "../dist/src/cli/cli.js";

process.exitCode = await main(process.argv);
