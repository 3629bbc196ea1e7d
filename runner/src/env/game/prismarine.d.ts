// prismarine-physics ships no type declarations; this is the part of its API the simulator uses.
declare module 'prismarine-physics' {
  import type { Vec3 } from 'vec3';
  export interface PhysicsWorld {
    getBlock(pos: Vec3): unknown;
  }
  export interface PhysicsControl {
    forward: boolean;
    back: boolean;
    left: boolean;
    right: boolean;
    jump: boolean;
    sprint: boolean;
    sneak: boolean;
  }
  /** The mutable player state `simulatePlayer` reads and advances by one tick. */
  export interface PhysicsEntity {
    pos: Vec3;
    vel: Vec3;
    onGround: boolean;
    isInWater: boolean;
    isInLava: boolean;
    isInWeb: boolean;
    isCollidedHorizontally: boolean;
    isCollidedVertically: boolean;
    elytraFlying: boolean;
    jumpTicks: number;
    jumpQueued: boolean;
    fireworkRocketDuration: number;
    attributes: unknown;
    yaw: number;
    pitch: number;
    control: PhysicsControl;
    jumpBoost: number;
    speed: number;
    slowness: number;
    dolphinsGrace: number;
    slowFalling: number;
    levitation: number;
    depthStrider: number;
    elytraEquipped: boolean;
  }
  export interface PhysicsEngine {
    simulatePlayer(entity: PhysicsEntity, world: PhysicsWorld): PhysicsEntity;
    playerHeight: number;
  }
  export function Physics(mcData: unknown, world: PhysicsWorld): PhysicsEngine;
}
