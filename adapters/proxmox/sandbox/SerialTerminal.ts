// The guest's serial getty and shell as a console user meets them: Enter shows `<hostname> login: `, the password is
// not echoed, then a prompt `root@<hostname>:~# ` that runs a few commands. Like a real tty it outlives a console
// connection: reconnecting finds the same session until the VM restarts.
import { guestUsers, runGuestCommand, shellWords } from "./guestCommands.ts"
import type { Vm } from "./Cluster.ts"

type Mode = "login" | "password" | "shell"

const crlf = (text: string) => text.replace(/\r?\n/g, "\r\n")

export class SerialTerminal {
  private mode: Mode = "login"
  private line = ""
  private user = ""
  private afterCr = false
  /** 0: plain; 1: after ESC; 2: inside a CSI sequence. */
  private escape = 0
  cols = 80
  rows = 24

  private readonly vm: Vm

  constructor(vm: Vm) {
    this.vm = vm
  }

  private get hostname() {
    return this.vm.guest.hostname
  }

  private loginPrompt() {
    return `${this.hostname} login: `
  }

  private prompt() {
    return `${this.user}@${this.hostname}:~${this.user === "root" ? "#" : "$"} `
  }

  resize(cols: number, rows: number): void {
    this.cols = cols
    this.rows = rows
  }

  /** Feeds typed characters; returns what the terminal prints back. */
  input(text: string): string {
    let out = ""
    for (const ch of text) {
      if (this.escape === 1) {
        this.escape = ch === "[" ? 2 : 0
        continue
      }
      if (this.escape === 2) {
        if (ch >= "@" && ch <= "~") this.escape = 0
        continue
      }
      if (ch === "\x1b") {
        this.escape = 1
        continue
      }
      const isNewline = ch === "\n" && this.afterCr
      this.afterCr = ch === "\r"
      if (isNewline) continue
      out += this.key(ch)
    }
    return out
  }

  private key(ch: string): string {
    if (ch === "\r" || ch === "\n") return this.enter()
    if (ch === "\x7f" || ch === "\b") {
      if (this.line === "") return ""
      this.line = [...this.line].slice(0, -1).join("")
      return this.mode === "password" ? "" : "\b \b"
    }
    if (ch === "\x03") {
      this.line = ""
      if (this.mode === "shell") return `^C\r\n${this.prompt()}`
      this.mode = "login"
      return `\r\n${this.loginPrompt()}`
    }
    if (ch === "\x04" && this.mode === "shell" && this.line === "") return this.logout()
    if (ch === "\x15") {
      const erase = "\b \b".repeat([...this.line].length)
      this.line = ""
      return this.mode === "password" ? "" : erase
    }
    if (ch < " ") return ""
    this.line += ch
    return this.mode === "password" ? "" : ch
  }

  private enter(): string {
    const line = this.line
    this.line = ""
    switch (this.mode) {
      case "login":
        if (line.trim() === "") return `\r\n${this.loginPrompt()}`
        this.user = line.trim()
        this.mode = "password"
        return "\r\nPassword: "
      case "password": {
        const known = guestUsers(this.vm).includes(this.user)
        const expected = this.vm.guest.passwords.get(this.user)
        if (!known || expected === undefined || expected !== line) {
          this.mode = "login"
          return `\r\n\r\nLogin incorrect\r\n${this.loginPrompt()}`
        }
        this.mode = "shell"
        return `\r\nLinux ${this.hostname} 6.1.0-28-cloud-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 x86_64\r\n\r\n${this.prompt()}`
      }
      case "shell":
        return `\r\n${this.run(line)}`
    }
  }

  private logout(): string {
    this.mode = "login"
    this.user = ""
    return `logout\r\n\r\n${this.loginPrompt()}`
  }

  private run(line: string): string {
    const words = shellWords(line)
    const program = words[0]
    if (program === undefined) return this.prompt()
    if (program === "exit" || program === "logout") return this.logout()
    const result = runGuestCommand(this.vm, words, { user: this.user, terminal: { cols: this.cols, rows: this.rows } })
    const err = result.exitcode === 127 ? `-bash: ${program}: command not found\n` : result.err
    return `${crlf(result.out)}${crlf(err)}${this.prompt()}`
  }
}
