package pacta2a

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// TaskStore is an a2a-go task store for an SDK server behind Wrap. PACT
// answers every task route itself (a task list is always empty, tasks/{id}
// is TASK_NOT_FOUND), so a Task an executor emits — a step-up — is read
// back only by the SDK, and only while the turn that made it runs. a2a-go's
// default in-memory store keeps every task forever: one entry per step-up,
// without bound. TaskStore keeps a task until ttl after its last write and
// at most maxTasks tasks; past that, Create refuses new tasks (the turn
// fails with INTERNAL) rather than dropping one a running turn still needs.
//
// Use it with a2asrv.WithTaskStore(pacta2a.NewTaskStore(0, 0)).
type TaskStore struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu     sync.Mutex
	tasks  map[a2a.TaskID]storedTask
	oldest time.Time // no entry was written before this (a cheap "is a sweep due")
}

type storedTask struct {
	raw     []byte // the task's JSON: a copy no caller can change
	version taskstore.TaskVersion
	written time.Time
}

// Defaults of NewTaskStore: a turn runs at most TurnTimeout (60 s by
// default), so ten minutes is far past any turn that could read its task.
const (
	DefaultTaskTTL  = 10 * time.Minute
	DefaultMaxTasks = 100_000
)

// NewTaskStore returns a TaskStore; ttl and maxTasks of 0 mean
// DefaultTaskTTL and DefaultMaxTasks. ttl must exceed the frontend's
// TurnTimeout.
func NewTaskStore(ttl time.Duration, maxTasks int) *TaskStore {
	if ttl <= 0 {
		ttl = DefaultTaskTTL
	}
	if maxTasks <= 0 {
		maxTasks = DefaultMaxTasks
	}
	return &TaskStore{ttl: ttl, max: maxTasks, now: time.Now, tasks: map[a2a.TaskID]storedTask{}}
}

var _ taskstore.Store = (*TaskStore)(nil)

// ErrTaskStoreFull is Create's answer when maxTasks unexpired tasks are held.
var ErrTaskStoreFull = errTaskStoreFull{}

type errTaskStoreFull struct{}

func (errTaskStoreFull) Error() string { return "pacta2a: the task store is full" }

// sweep forgets expired tasks; the caller holds mu. It scans only when an
// entry may have expired, so a store of live tasks costs nothing per call.
func (s *TaskStore) sweep(now time.Time) {
	if len(s.tasks) == 0 || now.Sub(s.oldest) < s.ttl {
		return
	}
	oldest := now
	for id, t := range s.tasks {
		switch {
		case now.Sub(t.written) >= s.ttl:
			delete(s.tasks, id)
		case t.written.Before(oldest):
			oldest = t.written
		}
	}
	s.oldest = oldest
}

// Create stores a new task.
func (s *TaskStore) Create(_ context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	raw, err := json.Marshal(task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	if _, ok := s.tasks[task.ID]; ok {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	if len(s.tasks) >= s.max {
		return taskstore.TaskVersionMissing, ErrTaskStoreFull
	}
	if len(s.tasks) == 0 {
		s.oldest = now
	}
	s.tasks[task.ID] = storedTask{raw: raw, version: 1, written: now}
	return 1, nil
}

// Update replaces a stored task, refusing a stale PrevVersion as a2a-go's
// optimistic concurrency control requires.
func (s *TaskStore) Update(_ context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	raw, err := json.Marshal(req.Task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	t, ok := s.tasks[req.Task.ID]
	if !ok {
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != t.version {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	s.tasks[req.Task.ID] = storedTask{raw: raw, version: t.version + 1, written: now}
	return t.version + 1, nil
}

// Get returns a copy of a stored, unexpired task.
func (s *TaskStore) Get(_ context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	now := s.now()
	s.mu.Lock()
	t, ok := s.tasks[id]
	if ok && now.Sub(t.written) >= s.ttl {
		delete(s.tasks, id)
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		return nil, a2a.ErrTaskNotFound
	}
	var task a2a.Task
	if err := json.Unmarshal(t.raw, &task); err != nil {
		return nil, err
	}
	return &taskstore.StoredTask{Task: &task, Version: t.version}, nil
}

// List is empty: PACT lists no tasks (its tasks route answers an empty
// list before the SDK is asked), and this store lists none either.
func (s *TaskStore) List(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return &a2a.ListTasksResponse{Tasks: []*a2a.Task{}}, nil
}

// Len is the number of tasks held, expired ones not yet swept included.
func (s *TaskStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}
