/** LangChain's Sandbox Standard Tests against ShellwrightSandbox on ssh (see standard-suite.ts). */

import { standardTestsOn } from "./standard-suite.js";

standardTestsOn("ssh");
