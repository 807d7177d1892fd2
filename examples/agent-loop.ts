// An agent loop with the Vercel AI SDK: generateText calls the Shellwright tools until the model is done.
// The model here is the AI SDK's mock (ai/test), scripted to make two tool calls, so this runs offline;
// put a real one (openai("gpt-5"), anthropic("claude-sonnet-4-5"), …) in its place.
// Run: node examples/agent-loop.ts (needs `npm install ai`)
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { createEnvironment } from "shellwright";
import { shellwrightTools } from "shellwright/ai";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const toolCall = (id: string, command: string) => ({
  content: [{ type: "tool-call" as const, toolCallId: id, toolName: "terminal", input: JSON.stringify({ command }) }],
  finishReason: { unified: "tool-calls" as const, raw: undefined },
  usage,
  warnings: [],
});
const model = new MockLanguageModelV4({
  doGenerate: [
    toolCall("call-1", "mkdir -p /tmp/agent-demo && cd /tmp/agent-demo && printf 'a\\nb\\nc\\n' > letters.txt"),
    toolCall("call-2", "wc -l < letters.txt; pwd"),
    {
      content: [{ type: "text" as const, text: "letters.txt has 3 lines." }],
      finishReason: { unified: "stop" as const, raw: undefined },
      usage,
      warnings: [],
    },
  ],
});

const env = await createEnvironment({ backend: "local" });
try {
  const result = await generateText({
    model,
    tools: shellwrightTools(env),
    prompt: "How many lines does letters.txt have?",
    stopWhen: isStepCount(5),
  });
  for (const step of result.steps)
    for (const call of step.toolResults) console.log("tool result:", JSON.stringify(call.output));
  console.log("answer:", result.text);
} finally {
  await env.execute("rm -rf /tmp/agent-demo");
  await env.close();
}
