// A docker session: the same execute() contract inside a container, removed at close().
// Run: node examples/docker-session.ts (needs Docker; SHELLWRIGHT_EXAMPLE_IMAGE picks the image)
import { createEnvironment } from "shellwright";

const image = process.env.SHELLWRIGHT_EXAMPLE_IMAGE ?? "debian:bookworm-slim";
const env = await createEnvironment({ backend: "docker", image, network: false, memoryMiB: 512 });
try {
  await env.execute("cd /tmp && export IN_CONTAINER=yes");
  const r = await env.execute('echo "$IN_CONTAINER: $(. /etc/os-release && echo $PRETTY_NAME) in $PWD"');
  console.log(r.output.trim());
  // No network: the container has only a loopback interface.
  const net = await env.execute("cat /sys/class/net/*/operstate 2>/dev/null | wc -l");
  console.log("network interfaces:", net.output.trim());
} finally {
  await env.close(); // removes the container
}
