// A setting that is present but unusable; stops the process with one line naming it.
import { Schema } from "effect"

export class InvalidSetting extends Schema.TaggedError<InvalidSetting>()("InvalidSetting", {
  name: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `Invalid setting ${this.name}: ${this.problem}`
  }
}
