/** The real Docker Engine the tests use when CI started it (scripts/test-env/docker.sh), and the image it built. */

export const DOCKER_TEST_ENABLED = process.env.SHELLWRIGHT_TEST_DOCKER === "1";

export const DOCKER_TEST_IMAGE = process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm";
