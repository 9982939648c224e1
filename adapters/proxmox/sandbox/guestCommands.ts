// A tiny simulated guest OS: what cloud-init leaves at boot (hostname, the password of `ciuser`), and the handful of
// commands the guest agent and the serial console can run (echo, cat /etc/hostname, hostname, whoami,
// cloud-init status, chpasswd, sh -c …). Anything else is "command not found".
import { loginUser, type Vm } from "./Cluster.ts"

export interface CommandResult {
  readonly exitcode: number
  readonly out: string
  readonly err: string
}

const ok = (out = ""): CommandResult => ({ exitcode: 0, out, err: "" })
const failed = (exitcode: number, err: string): CommandResult => ({ exitcode, out: "", err })

/** cloud-init at boot: hostname from the VM name, `cipassword` for `ciuser` (or the image's default user). */
export const bootGuest = (vm: Vm): void => {
  vm.guest.hostname = vm.config.get("name") ?? `vm${vm.vmid}`
  const password = vm.config.get("cipassword")
  if (password !== undefined) vm.guest.passwords.set(loginUser(vm), password)
  vm.guest.execs.clear()
}

/** The accounts that exist in the guest. */
export const guestUsers = (vm: Vm): ReadonlyArray<string> => [...new Set(["root", vm.imageUser, loginUser(vm)])]

/** Splits a shell line into words, honouring single and double quotes. */
export const shellWords = (line: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  let current = ""
  let quote: string | null = null
  let inWord = false
  for (const ch of line) {
    if (quote !== null) {
      if (ch === quote) quote = null
      else current += ch
    } else if (ch === "'" || ch === "\"") {
      quote = ch
      inWord = true
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current)
      current = ""
      inWord = false
    } else {
      current += ch
      inWord = true
    }
  }
  if (inWord) words.push(current)
  return words
}

const KERNEL = "6.1.0-28-cloud-amd64"

/**
 * Runs `argv` in the guest as `user`. `input` is stdin (the agent's `input-data`); `terminal` carries the console's
 * size for `stty size`.
 */
export const runGuestCommand = (
  vm: Vm,
  argv: ReadonlyArray<string>,
  options: { readonly input?: string | undefined; readonly user?: string; readonly terminal?: { readonly cols: number; readonly rows: number } } = {}
): CommandResult => {
  const [path = "", ...args] = argv
  const program = path.split("/").pop() ?? path
  const user = options.user ?? "root"
  const hostname = vm.guest.hostname
  switch (program) {
    case "echo":
      return args[0] === "-n" ? ok(args.slice(1).join(" ")) : ok(`${args.join(" ")}\n`)
    case "true":
      return ok()
    case "false":
      return failed(1, "")
    case "hostname":
      return ok(`${hostname}\n`)
    case "whoami":
      return ok(`${user}\n`)
    case "uname":
      return ok(args.includes("-a")
        ? `Linux ${hostname} ${KERNEL} #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22) x86_64 GNU/Linux\n`
        : "Linux\n")
    case "cat": {
      if (args.length === 0) return ok(options.input ?? "")
      let out = ""
      for (const file of args) {
        if (file === "/etc/hostname") out += `${hostname}\n`
        else return { exitcode: 1, out, err: `cat: ${file}: No such file or directory\n` }
      }
      return ok(out)
    }
    case "cloud-init":
      if (args.includes("status")) {
        return ok(args.includes("--long")
          ? "status: done\nextended_status: done\nboot_status_code: enabled-by-generator\ndetail: DataSourceNoCloud [seed=/dev/sr0]\nerrors: []\n"
          : "status: done\n")
      }
      return failed(2, "usage: cloud-init [-h] [--version] [--debug] [--force] {init,modules,single,query,status,…} ...\n")
    case "chpasswd": {
      const known = guestUsers(vm)
      for (const line of (options.input ?? "").split("\n")) {
        if (line.trim() === "") continue
        const at = line.indexOf(":")
        const name = at < 0 ? line : line.slice(0, at)
        if (at < 0 || !known.includes(name)) {
          return failed(1, `chpasswd: (user ${name}) pam_chauthtok() failed, error:\nAuthentication token manipulation error\nchpasswd: (line 1, user ${name}) password not changed\n`)
        }
        vm.guest.passwords.set(name, line.slice(at + 1))
      }
      return ok()
    }
    case "stty":
      if (args[0] === "size" && options.terminal !== undefined) return ok(`${options.terminal.rows} ${options.terminal.cols}\n`)
      return failed(1, "stty: 'standard input': Inappropriate ioctl for device\n")
    case "sh":
    case "bash":
      if (args[0] === "-c" && args[1] !== undefined) return runGuestCommand(vm, shellWords(args[1]), options)
      return failed(127, `${program}: interactive shells are not simulated\n`)
    default:
      return failed(127, `${program === "" ? path : program}: command not found\n`)
  }
}
