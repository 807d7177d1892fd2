import { describe, expect, it } from "vitest";
import {
  EDITOR_GUIDANCE,
  foregroundGuidance,
  SERVER_GUIDANCE,
  WRAPPER_GUIDANCE,
} from "../../../src/tools/terminal/foreground-guard.js";

describe("foregroundGuidance", () => {
  it.each([
    "python3 -m http.server",
    "python -m http.server 8000 --bind 127.0.0.1",
    "cd app && npm run dev",
    "npm start",
    "yarn dev",
    "pnpm run serve",
    "bun run dev:server",
    "vite",
    "npx vite --port 5173",
    "./node_modules/.bin/vite dev",
    "PORT=3000 next dev",
    "uvicorn main:app --reload",
    "uv run uvicorn main:app",
    "poetry run gunicorn app:app",
    "python3 -m uvicorn main:app",
    "python -m flask run",
    "flask run --port 5000",
    "FLASK_APP=app.py flask run",
    "python manage.py runserver",
    "rails s",
    "bundle exec rails server -p 3000",
    "php -S localhost:8000",
    "php artisan serve",
    "docker compose up",
    "docker-compose up --build",
    "nodemon index.js",
    "tsc --watch",
    "jupyter lab",
    "hugo server",
    "mkdocs serve",
    "sudo -u www uvicorn app:app",
    "env DEBUG=1 npm run dev",
    "echo starting; vite",
    "git pull && npm install && npm run dev",
    "if true; then vite; fi",
    "npm run build | tee log; npm run dev",
  ])("refuses the server %j", (command) => {
    expect(foregroundGuidance(command)).toBe(SERVER_GUIDANCE);
  });

  it.each([
    "nohup python3 -m http.server &",
    "nohup ./run.sh > out.log 2>&1 &",
    "setsid node server.js & disown",
    "sleep 100 & disown",
    "setsid -f sleep 100",
    "setsid --fork sleep 100",
    "cd x && nohup make &",
    "(nohup sleep 10 &)",
    "echo $(nohup sleep 5 &)",
  ])("refuses the background wrapper %j", (command) => {
    expect(foregroundGuidance(command)).toBe(WRAPPER_GUIDANCE);
  });

  it.each([
    "vi file.txt",
    "vim src/main.ts",
    "/usr/bin/vim",
    "sudo vim /etc/hosts",
    "nvim +12 a.py",
    "view log.txt",
    "vimdiff a b",
    "nano README.md",
    "emacs -nw notes.org",
    "emacs notes.org",
    "emacsclient -t x",
    "cd src && vim main.c",
    "git add . && vi msg.txt",
    "EDITOR=vim crontab -l; vim x",
  ])("refuses the editor %j", (command) => {
    expect(foregroundGuidance(command)).toBe(EDITOR_GUIDANCE);
  });

  it.each([
    "vim -es -c 'set ff=unix' -c wq file",
    "vim -Es +%s/a/b/g +wq file",
    "ex -s file",
    "emacs --batch -l x.el",
    "vim --version",
    "nano --help",
    "vim file &",
    'git commit -m "fix vim"',
    "cat notes.vim",
    "echo 'vim file'",
  ])("lets the editor batch use or mention %j run", (command) => {
    expect(foregroundGuidance(command)).toBeUndefined();
  });

  it.each([
    "echo vite",
    "grep uvicorn requirements.txt",
    "cat vite.config.ts",
    "pip install uvicorn flask",
    "npm run build",
    "npm install",
    "npm test",
    "vite build",
    "next build",
    "echo 'npm run dev'",
    'git commit -m "run flask run later"',
    "vite --help",
    "uvicorn --version",
    "npm run dev -- --help",
    "python3 -m http.server &",
    "npm run dev &",
    "sleep 1 &",
    "make 2>&1 | tail",
    "ls &> out.txt",
    "timeout 5 python3 -m http.server",
    "docker compose up -d",
    "man nohup",
    "which setsid",
    "echo nohup setsid disown",
    "nohup make",
    "python3 -m pytest",
    "python3 server_test.py",
    "echo ${vite}",
    "# vite\nls",
    "cat <<EOF\nvite\nnpm run dev\nEOF\necho done",
    "cat <<'X' > run.sh\nnohup server &\nX",
    "ls -la",
  ])("lets %j run", (command) => {
    expect(foregroundGuidance(command)).toBeUndefined();
  });
});
