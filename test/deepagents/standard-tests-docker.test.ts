/** LangChain's Sandbox Standard Tests against ShellwrightSandbox on docker (see standard-suite.ts). */

import { standardTestsOn } from "./standard-suite.js";

standardTestsOn("docker");
