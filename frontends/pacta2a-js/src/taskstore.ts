import type { ListTasksResponse, Task } from "@a2a-js/sdk";
import type { TaskStore } from "@a2a-js/sdk/server";

/**
 * EphemeralTaskStore is an @a2a-js/sdk TaskStore that keeps nothing. Behind
 * the front door the SDK needs none: PACT tasks are ephemeral (the step-up
 * task is answered once; tasks/{id} is TASK_NOT_FOUND, answered by pactd),
 * so an SDK store would only grow with every step-up a PA asks for.
 */
export class EphemeralTaskStore implements TaskStore {
  async save(_task: Task): Promise<void> {}
  async load(_taskId: string): Promise<Task | undefined> {
    return undefined;
  }
  async list(): Promise<ListTasksResponse> {
    return { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 };
  }
}
